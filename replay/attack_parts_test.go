package replay

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/xblgo/fgrl/limits"
)

// TestSameResultAnyParts: every client, coalescing or not, gives the
// same result twice and in 1, 2 or 8 parts, and its outcomes add up. The
// xsapi client is left out of the comparison: it jitters Retry-After at
// random (transport's jitterUp), and did so before each call had a
// goroutine of its own as well.
func TestSameResultAnyParts(t *testing.T) {
	var p Pattern
	for u := range 24 { // 24 users: 8 parts of 3 (60 cost 44 s under -race in CI, 2026-12-07)
		user := strconv.Itoa(2533274790000000 + u)
		p = append(p,
			Event{At: time.Duration(u) * 300 * time.Millisecond, Service: "profile", User: user, Count: 25 + u%9, Spread: 5 * time.Second},
			Event{At: time.Duration(u) * 300 * time.Millisecond, Service: "profile", User: user, Count: 10, Background: true},
			Event{At: time.Duration(u%5) * time.Second, Service: "presence/read", User: user, Count: 40, Spread: time.Duration(u%3) * time.Second},
			Event{At: time.Duration(u%7) * time.Second, Service: "social", User: user, Count: 30, Spread: 2 * time.Second})
	}
	for _, c := range append(Clients, Subscribed) {
		for _, co := range []bool{false, true} {
			t.Run(c+"/coalesce="+strconv.FormatBool(co), func(t *testing.T) {
				var want Result
				for i, parts := range []int{1, 1, 2, 8} {
					got, err := Run(context.Background(), p, Options{Limits: limits.Default(), Client: c, Coalesce: co, Parts: parts, OnStep: func(time.Time) {}})
					if err != nil {
						t.Fatal(err)
					}
					if got.Served+got.Refused+got.Failed+throttledCalls(got) != got.Calls {
						t.Errorf("parts %d: outcomes %+v do not add up", parts, got)
					}
					if i == 0 || c == "xsapi" {
						want = got
						continue
					}
					if diff := cmp.Diff(want, got, cmpopts.IgnoreUnexported(Delay{})); diff != "" {
						t.Errorf("run %d, %d parts: result differs (-first +this):\n%s", i, parts, diff)
					}
				}
			})
		}
	}
}
