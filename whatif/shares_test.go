package whatif_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/xblgo/fgrl/analyze"
	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/transport"
	"github.com/xblgo/fgrl/whatif"
)

// TestShares: the what-if says what became of the calls, served, delayed
// and refused, and whether the verdict got better only by refusing some:
// ignored429s' 40 presence reads in 8 s (the last 10 answered 429) come
// out not red through fgrl, all served, 13 of them delayed and none
// refused, so pacing made it; TestTurnsGreen's lookups go green while the
// transport refuses some, which RefusedOnly says.
func TestShares(t *testing.T) {
	res := replay(t)
	type shares struct{ Calls, Served, Delayed, Refused int }
	if d := cmp.Diff(shares{41, 41, 13, 0}, shares{res.Calls, res.Served, res.Delayed, res.Refused}); d != "" || res.RefusedOnly() {
		t.Errorf("ignored429s: RefusedOnly %v, (-want +got)\n%s", res.RefusedOnly(), d)
	}
	r, _ := whatif.New(nil, nil)
	for i := range 430 {
		at := time.Duration(i) * 1400 * time.Millisecond
		c := analyze.Call{Index: i, Time: t0.Add(at), Method: "GET", Status: 200,
			Authorization: "XBL3.0 x=111;REDACTED", URL: "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag"}
		if at%(300*time.Second) >= 30*1400*time.Millisecond { // past a window's 30: 429, and the title goes on
			c.Status, c.RetryAfter = 429, "10"
		}
		r.Add(&c)
	}
	res, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Refused == 0 || res.Served+res.Refused != res.Calls || !res.RefusedOnly() {
		t.Errorf("lookups every 1.4 s: %d calls, %d served, %d refused, RefusedOnly %v (%s then %s); want some refused, and RefusedOnly",
			res.Calls, res.Served, res.Refused, res.RefusedOnly(), res.Before.Verdict, res.After.Verdict)
	}
}

// TestPlannerAgrees: the planner and the what-if agree on a poller. The
// what-if replays through a transport at the analyzer's 90 % of each limit
// (Rules.NearLimit), so the plan for that transport (LimitShare 0.9: 11.149
// s for social) is a poller the what-if neither delays nor refuses, and
// the plain client's 10 s one it holds: the social poller, that
// the planner called safe while the what-if held 33 of its 60 calls.
func TestPlannerAgrees(t *testing.T) {
	tr := &transport.Transport{LimitShare: analyze.DefaultRules().NearLimit}
	rows, err := limits.Default().PlanFor([]limits.PeriodicCall{{Scope: "social", Every: time.Hour, Count: 1}}, tr.PlanClient(transport.Interactive))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		every time.Duration
		held  bool
	}{{"the plan's interval", rows[0].Fastest, false}, {"the plain client's", rows[0].Plain, true}} {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := whatif.New(nil, nil)
			for i := range 60 {
				r.Add(&analyze.Call{Index: i, Time: t0.Add(time.Duration(i) * tc.every), Method: "GET", Status: 200,
					Authorization: "XBL3.0 x=111;REDACTED", URL: "https://social.xboxlive.com/users/me/people"})
			}
			res, err := r.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if held := res.Delayed+res.Refused > 0; held != tc.held || res.Calls != 60 {
				t.Errorf("every %v: %d calls, %d delayed, %d refused; want held=%v", tc.every, res.Calls, res.Delayed, res.Refused, tc.held)
			}
		})
	}
}
