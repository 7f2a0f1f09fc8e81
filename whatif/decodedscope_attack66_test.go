package whatif_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/analyze"
	"github.com/xblgo/fgrl/whatif"
)

// held: package whatif: "Each user of the trace calls at the recorded
// times ..., through a transport that keeps every window within the share
// of its limits the analyzer warns past ..., so what the title could fix
// by pacing comes out clean", with analyze judging a path percent-decoded
// as the transport matches it (f714e17). Presence writes (burst 3 / 15 s)
// whose path decodes into other segments (%2F) or a doubled escape
// (%2565, judged presence/read by both): 12 calls 500 ms apart, the trace
// answered 429 from the fourth. The scope each is reported under is the
// one it is paced by: After is not red, and calls reported under
// presence/read (burst 30) are neither held nor refused.
func TestAttack66WhatIfDecodedScopes(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, p := range []string{
		"/users/xuid(2533274791234567)%2Fstate",
		"/users%2Fxuid(2533274791234567)%2Fstate",
		"/users/xuid(2533274791234567)/stat%2565",
		"/users/xuid(2533274791234567)/state%2F",
	} {
		r, err := whatif.New(nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		calls := make([]analyze.Call, 12)
		for i := range calls {
			calls[i] = analyze.Call{Index: i, Time: base.Add(time.Duration(i) * 500 * time.Millisecond), Method: "POST",
				URL: "https://userpresence.xboxlive.com" + p, Authorization: "XBL3.0 x=7;R", Status: 200, RequestBody: []byte(`{"state":"active"}`)}
			if i >= 3 {
				calls[i].Status, calls[i].RetryAfter = 429, "15"
			}
			r.Add(&calls[i])
		}
		r.AddInput(analyze.Input{Name: "atk.har", Calls: len(calls)})
		res, err := r.Run(context.Background())
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		t.Logf("%s: services %+v before %s after %s %v", p, res.Services, res.Before.Verdict, res.After.Verdict, res.After.ByRule)
		if res.After.Verdict == analyze.Red {
			t.Errorf("%s: after is red (%v)", p, res.After.ByRule)
		}
		for _, s := range res.Services {
			if strings.HasSuffix(s.Service, "/read") && s.Delayed+s.Refused > 0 {
				t.Errorf("%s: reported as %s, yet %d held and %d refused", p, s.Service, s.Delayed, s.Refused)
			}
		}
	}
}
