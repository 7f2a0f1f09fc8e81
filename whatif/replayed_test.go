package whatif_test

import (
	"context"
	"testing"
	"time"

	"github.com/xblgo/fgrl/analyze"
	"github.com/xblgo/fgrl/whatif"
)

// An outside attack on the what-if (2026-12-04): calls the replay could
// not send, and what the analysis after reads of a call (its body, its
// User-Agent), which the replay left out. Each test failed before its fix.

// burstOf is ignored429s' presence burst (40 reads in 8 s, the last 10
// answered 429), each call with method m and URL u.
func burstOf(m, u string) []analyze.Call {
	calls := make([]analyze.Call, 40)
	for i := range calls {
		calls[i] = analyze.Call{Index: i, Time: t0.Add(time.Duration(i) * 200 * time.Millisecond), Method: m, URL: u,
			Authorization: "XBL3.0 x=111;REDACTED", Status: 200}
		if i >= 30 {
			calls[i].Status, calls[i].RetryAfter = 429, "15"
		}
	}
	return calls
}

// TestUnsendableCallsFailTheWhatIf: a trace's calls the analyzer judges (by
// host and path) but the replay cannot send, because the trace recorded
// them over http or without a scheme (the transport sends no token over
// http; a URL without a host), with an escape or a byte net/url refuses,
// or with a method net/http refuses, failed in the replay and were left
// out of the analysis after: a red trace came out "green with fgrl" with 0
// of its 40 calls served, delayed or refused, and no error. Such calls
// must either be replayed (After judges all of them) or fail the what-if.
func TestUnsendableCallsFailTheWhatIf(t *testing.T) {
	const path = "userpresence.xboxlive.com/users/xuid(2533274791234567)"
	tests := []struct {
		method, url string
		replayed    bool // a call the replay can make: it must, not fail
	}{
		{"GET", "http://" + path, true},
		{"GET", path, true},
		{"GET", "ftp://" + path, true},
		{"GET", "https://" + path + "/%zz", false},
		{"GET", "https://" + path + "\x7f", false},
		{"GET", "https://[::1]" + path, false},
		{"G T", "https://" + path, false},
	}
	for _, tt := range tests {
		r, err := whatif.New(nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		calls := burstOf(tt.method, tt.url)
		for i := range calls {
			r.Add(&calls[i])
		}
		res, err := r.Run(context.Background())
		switch {
		case err != nil && tt.replayed:
			t.Errorf("%s %q: %v; want it replayed", tt.method, tt.url, err)
		case err != nil:
			continue // failed closed
		case res.Before.Verdict != analyze.Red:
			t.Errorf("%s %q: verdict %s before, want red", tt.method, tt.url, res.Before.Verdict)
		case res.After.Calls != res.Calls || res.Served+res.Refused != res.Calls:
			t.Errorf("%s %q: %d calls replayed, %d served, %d refused, %d judged after (verdict %s before, %s after); want every call judged or an error",
				tt.method, tt.url, res.Calls, res.Served, res.Refused, res.After.Calls, res.Before.Verdict, res.After.Verdict)
		}
	}
}

// TestBodiesJudgedAfter: the analysis after judged the replayed calls
// without their request bodies, which its rules read: a trace's batch
// calls of one user each (small-batch: yellow) came out "green with fgrl",
// which does not batch; and POSTs of different bodies to one URL came out
// as repeated calls, which they are not. The verdict after must be the
// trace's where fgrl changes nothing (no call near a limit).
func TestBodiesJudgedAfter(t *testing.T) {
	far := []time.Duration{0, 50 * time.Second, 130 * time.Second, 200 * time.Second, 330 * time.Second, 400 * time.Second}
	near := []time.Duration{0, 4 * time.Second, 9 * time.Second, 13 * time.Second, 18 * time.Second, 22 * time.Second} // within the repeat window
	tests := map[string]struct {
		at   []time.Duration
		body func(i int) []byte
	}{
		"small batches": {far, func(int) []byte { return []byte(`{"userIds":["2533274791234567"],"settings":["Gamertag"]}`) }},
		"distinct bodies": {near, func(i int) []byte {
			return []byte(`{"userIds":["253327479123456` + string(rune('0'+i)) + `","2533274791234599"],"settings":["Gamertag"]}`)
		}},
	}
	for name, tt := range tests {
		r, err := whatif.New(nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i, d := range tt.at {
			r.Add(&analyze.Call{Index: i, Time: t0.Add(d), Method: "POST", URL: "https://profile.xboxlive.com/users/batch/profile/settings",
				Authorization: "XBL3.0 x=111;REDACTED", Status: 200, RequestBody: tt.body(i)})
		}
		res, err := r.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if res.Delayed != 0 || res.Refused != 0 || res.After.Verdict != res.Before.Verdict || len(res.After.ByRule) != len(res.Before.ByRule) {
			t.Errorf("%s: %d delayed, %d refused; before %s %v, after %s %v", name, res.Delayed, res.Refused,
				res.Before.Verdict, res.Before.ByRule, res.After.Verdict, res.After.ByRule)
		}
	}
}

// TestUserAgentJudgedAfter: the replay sent none of the trace's
// User-Agents, which the analyzer reads: a title's own calls
// (Rules.UserAgent) to a host of its own, which fgrl does not pace (no
// limit of the table), were judged before (red: 429s ignored, bursts) and
// not at all after: "green with fgrl" with 0 calls delayed. (analyze.Recorder
// did not record a call's User-Agent either.) Social
// Manager's batches, exempt from small-batch before, were judged after.
func TestUserAgentJudgedAfter(t *testing.T) {
	rules := analyze.DefaultRules()
	rules.UserAgent = "MyTitle/1.0"
	r, err := whatif.New(nil, rules)
	if err != nil {
		t.Fatal(err)
	}
	calls := burstOf("GET", "https://api.mytitle.example/users/me/state")
	for i := range calls {
		calls[i].UserAgent = rules.UserAgent
		r.Add(&calls[i])
	}
	res, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// fgrl has no limit for the host and holds none of them: the bursts the
	// trace made are made again (the mock, knowing no limit either, answers
	// them all, so the trace's 429s are not).
	if res.Delayed != 0 || res.Refused != 0 || res.After.Verdict == analyze.Green || res.After.ByRule[analyze.RuleBurst] != res.Before.ByRule[analyze.RuleBurst] {
		t.Errorf("a title's own calls, none delayed or refused: before %s %v, after %s %v", res.Before.Verdict, res.Before.ByRule, res.After.Verdict, res.After.ByRule)
	}

	r, err = whatif.New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range []int{0, 50, 130, 200, 330, 400} {
		r.Add(&analyze.Call{Index: i, Time: t0.Add(time.Duration(d) * time.Second), Method: "POST", URL: "https://profile.xboxlive.com/users/batch/profile/settings",
			Authorization: "XBL3.0 x=111;REDACTED", UserAgent: "XboxServicesAPI SocialManager", Status: 200,
			RequestBody: []byte(`{"userIds":["2533274791234567"],"settings":["Gamertag"]}`)})
	}
	if res, err = r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if res.After.Verdict != res.Before.Verdict || len(res.After.ByRule) != len(res.Before.ByRule) {
		t.Errorf("Social Manager's batches: before %s %v, after %s %v", res.Before.Verdict, res.Before.ByRule, res.After.Verdict, res.After.ByRule)
	}
}
