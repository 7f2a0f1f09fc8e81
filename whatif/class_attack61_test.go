package whatif_test

import (
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/analyze"
)

// BREAK for percent-encoded paths (the plain ones hold). Promise (package
// whatif): "Each user of the trace calls at the recorded times ..., through a
// transport that keeps every window within the share of its limits the
// analyzer warns past ..., so what the title could fix by pacing comes out
// clean." Presence writes (burst 3 / 15 s) whose path the analyzer and the
// transport may read differently (percent-encoded): 12 writes 500 ms apart (6 s),
// the trace answered some 429. Whatever class the service is judged under,
// the replay must pace by the same one: After has no finding of calls over
// a limit pacing would have kept.
func TestAttack61ClassByEncodedPath(t *testing.T) {
	paths := []string{
		"/users/xuid(2533274791234567)/state",
		"/users/xuid%282533274791234567%29/state",
		"/users/xuid(2533274791234567)/stat%65",
		"/users/me/state",
		"/USERS/ME/STATE",
	}
	for _, p := range paths {
		var calls []analyze.Call
		for i := range 12 {
			c := analyze.Call{Index: i, Time: t0.Add(time.Duration(i) * 500 * time.Millisecond), Method: "POST",
				URL: "https://userpresence.xboxlive.com" + p, Authorization: "XBL3.0 x=7;R", Status: 200, RequestBody: []byte(`{"state":"active"}`)}
			if i >= 3 {
				c.Status, c.RetryAfter = 429, "15"
			}
			calls = append(calls, c)
		}
		res, err := attack61Run(t, calls, 1)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		var scopes []string
		for _, s := range res.Services {
			scopes = append(scopes, s.Service)
		}
		t.Logf("%s: scopes %v services %+v before %s %v after %s %v unrepro %v", p, scopes, res.Services, res.Before.Verdict, res.Before.ByRule, res.After.Verdict, res.After.ByRule, res.Unreproduced)
		if res.After.Verdict == analyze.Red {
			t.Errorf("%s: after is red (%v): the replay did not pace by the class the analyzer judges", p, res.After.ByRule)
		}
		// 12 calls in 6 s are within 90 % of presence/read's burst (27 of
		// 30 / 15 s): a replay pacing by the limits of the scope it reports
		// them under holds and refuses none of them.
		for _, s := range res.Services {
			if strings.HasSuffix(s.Service, "/read") && s.Delayed+s.Refused > 0 {
				t.Errorf("%s: reported as %s (burst 30), yet fgrl held %d and refused %d of its 12 calls: paced by presence/write's burst 3, not the limits of the service it is judged and reported under", p, s.Service, s.Delayed, s.Refused)
			}
		}
	}
}
