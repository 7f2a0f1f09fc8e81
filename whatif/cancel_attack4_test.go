package whatif_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/xblgo/fgrl/analyze"
	"github.com/xblgo/fgrl/internal/leakcheck"
	"github.com/xblgo/fgrl/whatif"
	"go.uber.org/goleak"
)

// attack4GreenTrace adds a green trace to r: users each reading presence
// every 100 ms for calls calls, every one answered 200.
func attack4GreenTrace(r *whatif.Replayer, users, calls int) {
	i := 0
	for u := range users {
		for k := range calls {
			url := "https://userpresence.xboxlive.com/users/xuid(" + strconv.Itoa(2533274790000000+u) + ")"
			r.Add(&analyze.Call{Index: i, Time: t0.Add(time.Duration(k) * 100 * time.Millisecond), Method: "GET", URL: url,
				Authorization: "XBL3.0 x=" + strconv.Itoa(u) + ";R", Status: 200})
			i++
		}
	}
}

// held: TestAttack4WhatIfCancelledNeverAVerdict: a what-if whose context has
// ended before Run, or ends at 1, 3, 10 or 30 ms into it, in 1, 2 or 8
// parts, of a trace that is green before (a pass, were the replay
// complete), never returns a Result beside an error, and its error is
// the context's (errors.Is). Promised: replay.RunEvents' godoc, "When
// ctx ends, the calls not yet started are not made and Run returns
// ctx's error", and whatif.Run is `xblcall analyze --what-if`, whose
// verdict after must not come from a replay cut short. No goroutine is
// left.
func TestAttack4WhatIfCancelledNeverAVerdict(t *testing.T) {
	for _, parts := range []int{1, 2, 8} {
		for _, after := range []time.Duration{0, time.Millisecond, 3 * time.Millisecond, 10 * time.Millisecond, 30 * time.Millisecond} {
			t.Run(strconv.Itoa(parts)+"/"+after.String(), func(t *testing.T) {
				before := goleak.IgnoreCurrent()
				r, err := whatif.New(nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				whatif.SetParts(r, parts)
				attack4GreenTrace(r, 500, 40) // 20,000 calls (60,000 cost 33 s under -race in CI, 2026-12-07)
				ctx, cancel := context.WithCancelCause(context.Background())
				cause := errors.New("atk: cut short")
				if after == 0 {
					cancel(cause)
				} else {
					time.AfterFunc(after, func() { cancel(cause) })
				}
				defer cancel(nil)
				res, err := r.Run(ctx)
				switch {
				case err != nil && res != nil:
					t.Errorf("a cancelled what-if returned a result (after: %s) beside %v", res.After.Verdict, err)
				case err != nil && !errors.Is(err, context.Canceled):
					t.Errorf("err %v; want the context's (context.Canceled)", err)
				case err == nil && after == 0:
					t.Errorf("a what-if whose context had ended returned a result (after: %s), no error", res.After.Verdict)
				}
				goleak.VerifyNone(t, append(leakcheck.Options(), before)...)
			})
		}
	}
}
