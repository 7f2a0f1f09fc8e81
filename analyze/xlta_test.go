package analyze

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestTraceAnalyzerRules: the trace analyzer's rules about who makes a
// call, each on a trace written for it: Social Manager's calls are exempt
// from polling, repeated-call and small-batch (its PR #47); PlayFab calls
// for a sample title ID are a certification warning (its TitleId rule,
// XR-003); a title's own User-Agent makes its own service judged (its
// custom user agent).
func TestTraceAnalyzerRules(t *testing.T) {
	const social = "https://social.xboxlive.com/users/me/people"
	const profiles = "https://profile.xboxlive.com/users/batch/profile/settings"
	poll := func(ua string) trace { // six identical calls 30 s apart, and two batches of one user
		var tr trace
		for i := range 6 {
			tr.add(float64(i)*30, "GET", social, "1", 200).UserAgent = ua
		}
		for i := range 2 {
			c := tr.add(200+float64(i), "POST", profiles, "1", 200)
			c.UserAgent, c.RequestBody = ua, []byte(`{"userIds":["2533274790000001"],"settings":["Gamertag"]}`)
		}
		return tr
	}
	playfab := func(host, ua string) trace {
		var tr trace
		for i := range 3 {
			tr.add(float64(i), "POST", "https://"+host+"/Client/LoginWithXbox", "", 200).UserAgent = ua
		}
		return tr
	}
	own := func() trace {
		var tr trace
		for i := range 40 { // 40 calls in 4 s: past the fallback's 10 / 15 s
			tr.add(float64(i)*0.1, "GET", "https://api.mygame.example.com/matches", "1", 200).UserAgent = "MyGame/1.0"
		}
		return tr
	}
	for _, tc := range []struct {
		name      string
		tr        trace
		userAgent string
		want      map[string]int
	}{
		{"social manager exempt", poll("XboxServicesAPI/2021.04.20210426.0 c SocialManager"), "", map[string]int{"batch-frequency/warn": 1}}, // not exempt from this one
		{"the same calls from the title", poll("XboxServicesAPI/2021.04.20210426.0 c"), "",
			map[string]int{"polling/warn": 1, "repeated-calls/warn": 1, "small-batch/warn": 1, "batch-frequency/warn": 1}},
		{"sample title ID", playfab("86e2.playfabapi.com", "PlayFab Agent/1.0"), "", map[string]int{"sample-title-id/warn": 1}},
		{"the title's own ID", playfab("1a2b3.playfabapi.com", "PlayFab Agent/1.0"), "", map[string]int{}},
		{"not PlayFab's call", playfab("86e2.playfabapi.com", "curl/8"), "", map[string]int{}},
		{"own user agent", own(), "MyGame/1.0", map[string]int{"call-frequency/warn": 2, "burst/warn": 2, "repeated-calls/warn": 1, "polling/warn": 1}},
		{"own service, no user agent set", own(), "", map[string]int{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := DefaultRules()
			r.UserAgent = tc.userAgent
			a, err := New(nil, r)
			if err != nil {
				t.Fatal(err)
			}
			for i := range tc.tr {
				tc.tr[i].Index = i
				a.Add(&tc.tr[i])
			}
			rep := a.Report()
			if diff := cmp.Diff(tc.want, rules(rep)); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
			for _, f := range rep.Findings {
				if f.Rule == RuleSampleTitleID && (f.Calls != 3 || !strings.Contains(f.Reason, "86E2") || !strings.Contains(f.Reason, "XR-003")) {
					t.Errorf("sample title finding: %+v", f)
				}
			}
		})
	}
}

// TestHARUserAgent: the HAR reader keeps a request's User-Agent (cut at
// MaxUserAgent bytes) beside its Authorization, whatever their order.
func TestHARUserAgent(t *testing.T) {
	long := strings.Repeat("x", MaxUserAgent+100)
	har := `{"log":{"entries":[
	 {"startedDateTime":"2026-03-01T20:00:00Z","request":{"method":"GET","url":"https://social.xboxlive.com/users/me/people",
	  "headers":[{"name":"user-agent","value":"XboxServicesAPI c SocialManager"},{"value":"XBL3.0 x=1;t","name":"Authorization"}]},"response":{"status":200}},
	 {"startedDateTime":"2026-03-01T20:00:01Z","request":{"method":"GET","url":"https://social.xboxlive.com/users/me/people",
	  "headers":[{"name":"User-Agent","value":"` + long + `"}]},"response":{"status":200}}]}}`
	var got []Call
	if _, err := ReadHAR(strings.NewReader(har), func(c *Call) { got = append(got, *c) }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].UserAgent != "XboxServicesAPI c SocialManager" || got[0].Authorization != "XBL3.0 x=1;REDACTED" || len(got[1].UserAgent) != MaxUserAgent {
		t.Errorf("calls %+v", got)
	}
}

// TestEventsBurst: in-game events read from the uploads that carry them
// (Common Schema 2.1 JSON lines to *.data.microsoft.com, Common Schema 1.0
// '|' lines to data-vef.xboxlive.com): 10 or more of a user's events
// within 5 s are one events-burst finding, 9 are none, lines that are not
// a title's events count for nothing, and the uploads are not judged as
// calls.
func TestEventsBurst(t *testing.T) {
	cs2 := func(n int, name string) []byte {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, `{"name":"%s","time":"2026-03-01T20:00:0%d.%d00Z","data":{"baseData":{}}}`+"\n", name, i/10, i%10*3)
		}
		return []byte(b.String())
	}
	cs1 := func(n int) []byte {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "1|ABCD_1A2B3C4D.PlayerSessionStart|2026-03-01T20:00:0%d.%dZ|a|b|c|d|e|f|g|h|i\n", i/3, i%3*3)
		}
		return []byte(b.String())
	}
	for _, tc := range []struct {
		name string
		host string
		body []byte
		want map[string]int
	}{
		{"cs2.1, 12 events in 3.3 s", "vortex.data.microsoft.com", cs2(12, "Microsoft.XboxLive.T1a2b3c4d.PlayerSessionStart"), map[string]int{"events-burst/warn": 1}},
		{"cs2.1, 9 events", "vortex.data.microsoft.com", cs2(9, "Microsoft.XboxLive.T1a2b3c4d.PlayerSessionStart"), map[string]int{}},
		{"cs2.1, the system's events", "vortex.data.microsoft.com", cs2(12, "Microsoft.Windows.Shell.Launch"), map[string]int{}},
		{"cs1.0, 10 events in 3 s", "data-vef.xboxlive.com", cs1(10), map[string]int{"events-burst/warn": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tr trace
			tr.add(0, "POST", "https://"+tc.host+"/collect/v1", "1", 200).RequestBody = tc.body
			rep := tr.report(t)
			if diff := cmp.Diff(tc.want, rules(rep)); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
			if rep.Judged != 0 || len(rep.NotJudged) != 1 {
				t.Errorf("the upload was judged as a call: judged %d, not judged %v", rep.Judged, rep.NotJudged)
			}
		})
	}
}
