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

// TestWhatIfCancelled: a what-if cancelled while thousands of calls
// wait for their budget returns promptly with the context's error and
// leaves no goroutine, in one part or several.
func TestWhatIfCancelled(t *testing.T) {
	for _, parts := range []int{1, 2, 4} {
		for _, after := range []time.Duration{5 * time.Millisecond, 100 * time.Millisecond} {
			t.Run(strconv.Itoa(parts)+"/"+after.String(), func(t *testing.T) {
				before := goleak.IgnoreCurrent()
				r, err := whatif.New(nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				whatif.SetParts(r, parts)
				i := 0
				for u := range 800 { // 32,000 calls (80,000 cost 22 s under -race in CI, 2026-12-07)
					for k := range 40 {
						url := "https://userpresence.xboxlive.com/users/xuid(" + strconv.Itoa(2533274790000000+u) + ")"
						r.Add(&analyze.Call{Index: i, Time: t0.Add(time.Duration(k) * 100 * time.Millisecond), Method: "GET", URL: url,
							Authorization: "XBL3.0 x=" + strconv.Itoa(u) + ";R", Status: 200})
						i++
					}
				}
				ctx, cancel := context.WithTimeout(context.Background(), after)
				defer cancel()
				done := make(chan error, 1)
				go func() {
					_, err := r.Run(ctx)
					done <- err
				}()
				select {
				case err := <-done:
					t.Logf("Run: %v", err)
					if ctx.Err() != nil && !errors.Is(err, context.DeadlineExceeded) {
						t.Errorf("err %v; want the deadline's", err)
					}
				case <-time.After(60 * time.Second):
					t.Fatal("Run did not return within 60 s")
				}
				goleak.VerifyNone(t, append(leakcheck.Options(), before)...)
			})
		}
	}
}
