package replay

import (
	"context"
	"testing"
	"time"

	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/transport"
)

// TestPlanForFgrlMatchesSimulation: the poll planner's figure for the fgrl
// client is what the fgrl transport does. Polled at the plan's Fastest
// interval for 20 minutes, with the limit share and priority the plan was
// made for, the transport sends every call at once (none delayed, none
// refused, no 429); a little faster, it holds some. The plain client's
// figure beside it (social every 10 s) is one fgrl delays: its budget's
// 1 s margin. Before the planner took the client, it called social every
// 10 s the fastest safe interval, which this replay delays.
func TestPlanForFgrlMatchesSimulation(t *testing.T) {
	l := limits.Default()
	for _, tc := range []struct {
		name       string
		scope      string
		count      int
		share      float64 // transport.Transport.LimitShare
		background bool
	}{
		{"social", "social", 1, 0, false},
		{"social at the what-if's 90 %", "social", 1, 0.9, false},
		{"three presence lookups", "presence/read", 3, 0, false},
		{"a background profile job", "profile", 1, 0, true},
		{"a background profile job at 90 %", "profile", 2, 0.9, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prio := transport.Interactive
			if tc.background {
				prio = transport.Background
			}
			tr := &transport.Transport{LimitShare: tc.share}
			plan := func(every time.Duration) limits.PlanRow {
				t.Helper()
				rows, err := l.PlanFor([]limits.PeriodicCall{{Scope: tc.scope, Every: every, Count: tc.count}}, tr.PlanClient(prio))
				if err != nil {
					t.Fatal(err)
				}
				return rows[0]
			}
			fastest := plan(time.Hour).Fastest
			if fastest == 0 {
				t.Fatalf("no safe interval for %s x%d", tc.scope, tc.count)
			}
			for _, every := range []time.Duration{fastest, fastest - fastest/20, plan(time.Hour).Plain} {
				var p Pattern
				for at := time.Duration(0); at < 20*time.Minute; at += every {
					p = append(p, Event{At: at, Service: tc.scope, User: ExampleUser, Count: tc.count, Background: tc.background})
				}
				res, err := Run(context.Background(), p, Options{Limits: l, Client: "fgrl", LimitShare: tc.share})
				if err != nil {
					t.Fatal(err)
				}
				delayed := 0
				for _, s := range res.Services {
					delayed += s.Delayed
				}
				held := delayed + res.Refused + res.Server429s
				if safe := plan(every).Safe(); safe != (held == 0) || (every >= fastest) != safe {
					t.Errorf("every %v (plan: fastest %v): the planner says safe=%v, the replay delayed %d, refused %d, saw %d 429s of %d calls",
						every, fastest, safe, delayed, res.Refused, res.Server429s, res.Calls)
				}
			}
		})
	}
}
