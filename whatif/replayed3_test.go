package whatif_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/analyze"
	"github.com/xblgo/fgrl/whatif"
)

// A third outside attack on the what-if (2026-12-04). Each test failed
// before its fix, but TestBodiesUserAgentsAcrossParts, a probe that held.

// replayCalls replays calls (numbered in order) in parts (0: the default).
func replayCalls(t *testing.T, calls []analyze.Call, parts int) *whatif.Result {
	t.Helper()
	r, err := whatif.New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if parts > 0 {
		whatif.SetParts(r, parts)
	}
	for i := range calls {
		calls[i].Index = i
		r.Add(&calls[i])
	}
	res, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestUnjudgedFindingsStayAfter: two presence reads a minute apart
// (no finding), a 429 from a CDN no rule covers (not-judged) and a
// presence read without a token (no-token): the trace is yellow. The
// calls the analyzer does not judge are not replayed, so the analysis
// after never saw them and came out green, no note: fgrl does not touch a
// host no rule covers nor give a call a token, so those findings are the
// title's with fgrl too.
func TestUnjudgedFindingsStayAfter(t *testing.T) {
	const url = "https://userpresence.xboxlive.com/users/xuid(2533274791234567)"
	calls := []analyze.Call{
		{Time: t0, Method: "GET", URL: url, Authorization: "XBL3.0 x=111;REDACTED", Status: 200},
		{Time: t0.Add(30 * time.Second), Method: "GET", URL: "https://assets.example.com/a.png", Status: 429, RetryAfter: "5"},
		{Time: t0.Add(40 * time.Second), Method: "GET", URL: url, Status: 200},
		{Time: t0.Add(60 * time.Second), Method: "GET", URL: url, Authorization: "XBL3.0 x=111;REDACTED", Status: 200},
	}
	res := replayCalls(t, calls, 0)
	t.Logf("before %s %v, after %s %v", res.Before.Verdict, res.Before.ByRule, res.After.Verdict, res.After.ByRule)
	if res.Before.ByRule[analyze.RuleNotJudged] == 0 || res.Before.ByRule[analyze.RuleNoToken] == 0 {
		t.Fatalf("the trace is not the one meant: %v", res.Before.ByRule)
	}
	for _, rule := range []string{analyze.RuleNotJudged, analyze.RuleNoToken} {
		if res.After.ByRule[rule] != res.Before.ByRule[rule] {
			t.Errorf("%s: %d findings in the trace, %d with fgrl, which never touches those calls (verdict %s, then %s)",
				rule, res.Before.ByRule[rule], res.After.ByRule[rule], res.Before.Verdict, res.After.Verdict)
		}
	}
	if res.After.Verdict != res.Before.Verdict {
		t.Errorf("verdict %s in the trace, %s with fgrl", res.Before.Verdict, res.After.Verdict)
	}
}

// TestUnreproducedPerUser: user A bursts 60 presence reads in 3 s,
// all answered (fgrl holds or refuses 33 of them); user B reads 10 times,
// 23 s apart, each answered 429: the table's limits explain none of B's
// 429s. Result.Unreproduced compared the service's 429s with the calls
// fgrl held of every user, so A's held calls hid B's 429s: red in the
// trace, yellow with fgrl, no note. One user's held calls explain no
// other user's 429s.
func TestUnreproducedPerUser(t *testing.T) {
	const url = "https://userpresence.xboxlive.com/users/xuid(2533274791234567)"
	var calls []analyze.Call
	for i := range 60 {
		calls = append(calls, analyze.Call{Time: t0.Add(time.Duration(i) * 50 * time.Millisecond), Method: "GET", URL: url,
			Authorization: "XBL3.0 x=111;REDACTED", Status: 200})
	}
	for i := range 10 {
		calls = append(calls, analyze.Call{Time: t0.Add(60*time.Second + time.Duration(i)*23*time.Second), Method: "GET", URL: url,
			Authorization: "XBL3.0 x=222;REDACTED", Status: 429, RetryAfter: "1"})
	}
	for _, parts := range []int{1, 3} {
		res := replayCalls(t, slices.Clone(calls), parts)
		if res.Services[0].Fgrl429s+res.Services[0].Delayed+res.Services[0].Refused < 10 {
			t.Fatalf("the trace is not the one meant: %+v", res.Services)
		}
		if !slices.Contains(res.Unreproduced, "presence/read") {
			t.Errorf("parts %d: user B's 10 429s, none explained by the limits, hidden by user A's held calls: verdict %s, then %s, unreproduced %q",
				parts, res.Before.Verdict, res.After.Verdict, res.Unreproduced)
		}
	}
}

// TestBodiesUserAgentsAcrossParts: eight users' batch calls, bodies and
// User-Agents (Social Manager's and not) alike and not, tokens in bodies:
// the what-if is the same in 1, 2 and 7 parts, and no body's text is in
// its JSON.
func TestBodiesUserAgentsAcrossParts(t *testing.T) {
	mk := func() []analyze.Call {
		var calls []analyze.Call
		for u := range 8 {
			for i := range 40 {
				calls = append(calls, analyze.Call{Time: t0.Add(time.Duration(i) * 300 * time.Millisecond), Method: "POST",
					URL: "https://profile.xboxlive.com/users/batch/profile/settings", UserAgent: []string{"A SocialManager", "B"}[(i+u)%2],
					Authorization: "XBL3.0 x=" + string(rune('a'+u)) + ";REDACTED", Status: []int{200, 429}[i/35],
					RequestBody: []byte(`{"userIds":["2533274791234567"],"settings":["Gamertag"],"RpsTicket":"t=SECRETBODYTOKEN` + string(rune('a'+i%3)) + `"}`)})
			}
		}
		return calls
	}
	var first []byte
	for _, parts := range []int{1, 2, 7} {
		b, err := json.Marshal(replayCalls(t, mk(), parts))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "SECRETBODYTOKEN") {
			t.Errorf("a body's token in the what-if's JSON")
		}
		if first == nil {
			first = b
		} else if string(b) != string(first) {
			t.Errorf("parts %d: the what-if differs from 1 part's", parts)
		}
	}
}
