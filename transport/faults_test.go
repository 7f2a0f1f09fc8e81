package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/throttle"
)

// counting counts the requests that reach the service.
type counting struct {
	base http.RoundTripper
	n    atomic.Int64
}

func (c *counting) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.base.RoundTrip(r)
}

type tally struct {
	responses, truncated, refused, failed atomic.Int64
	late                                  atomic.Int64
}

// TestFaultsNothingLost drives many concurrent callers through the transport
// against a misbehaving mock (latency, 500/503s, resets, truncated bodies,
// and each odd form of Retry-After): every call ends, by its deadline, as a
// response, a local refusal or an error; the service counted exactly what
// the transport sent; and memory does not grow from one round to the next.
func TestFaultsNothingLost(t *testing.T) {
	modes := []mock.RetryAfterMode{mock.RetryAfterSeconds, mock.RetryAfterMissing, mock.RetryAfterHTTPDate,
		mock.RetryAfterHuge, mock.RetryAfterNegative, mock.RetryAfterGarbage}
	var heaps []uint64
	names := []string{"seconds", "missing", "http-date", "huge", "negative", "garbage"}
	for round, mode := range modes {
		t.Run("Retry-After "+names[round], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				faultRound(t, mode, uint64(round))
			})
		})
		heaps = append(heaps, heapAfterGC())
	}
	if grow := int64(heaps[len(heaps)-1]) - int64(heaps[0]); grow > 8<<20 {
		t.Errorf("heap grew %d bytes over %d rounds: %v", grow, len(heaps), heaps)
	}
}

func faultRound(t *testing.T, mode mock.RetryAfterMode, seed uint64) {
	const users, calls, timeout = 40, 8, 25 * time.Second
	h := mock.Must(mock.New(mock.Config{Faults: mock.Faults{Latency: throttle.Duration(300 * time.Millisecond), ErrorRate: 0.25,
		ResetRate: 0.1, TruncateRate: 0.1, RetryAfter: mode, Seed: seed}}))
	sent := &counting{base: h}
	tr := &Transport{Base: sent, TitleID: title}
	var got tally
	var wg sync.WaitGroup
	for u := 0; u < users; u++ {
		xuid := strconv.Itoa(2533274790000000 + u)
		wg.Go(func() {
			for i := 0; i < calls; i++ {
				oneFaultyCall(t, tr, xuid, timeout, &got)
			}
		})
	}
	wg.Wait()
	total := got.responses.Load() + got.refused.Load() + got.failed.Load()
	if total != users*calls || got.late.Load() != 0 {
		t.Errorf("mode %d: %d outcomes of %d calls (%d late)", mode, total, users*calls, got.late.Load())
	}
	counted := 0
	for u := 0; u < users; u++ {
		d, err := h.Counts(throttle.Key{User: mock.UserHash(strconv.Itoa(2533274790000000 + u)), Title: title, Scope: "profile"})
		if err != nil {
			t.Fatal(err)
		}
		counted += d.Sustain.Count
	}
	if st := tr.Stats(); int64(counted) != sent.n.Load() || st.Attempts != sent.n.Load() {
		t.Errorf("mode %d: service counted %d, %d reached it, transport sent %d", mode, counted, sent.n.Load(), st.Attempts)
	}
	t.Logf("mode %d: %d responses (%d truncated), %d refused locally, %d errors; %d attempts",
		mode, got.responses.Load(), got.truncated.Load(), got.refused.Load(), got.failed.Load(), sent.n.Load())
}

func oneFaultyCall(t *testing.T, tr *Transport, xuid string, timeout time.Duration, got *tally) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	start := time.Now()
	req, _ := http.NewRequestWithContext(ctx, "GET", profileURL, nil)
	req.Header.Set("Authorization", mock.Token(xuid, title))
	resp, err := tr.RoundTrip(req)
	var te *ThrottleError
	switch {
	case err == nil:
		got.responses.Add(1)
		if _, err := io.ReadAll(resp.Body); err != nil {
			got.truncated.Add(1)
		}
		resp.Body.Close()
	case errors.As(err, &te) && te.Local:
		got.refused.Add(1)
	default:
		got.failed.Add(1)
	}
	if time.Since(start) > timeout {
		got.late.Add(1)
		t.Errorf("call took %v, past its %v deadline: %v", time.Since(start), timeout, fmt.Sprint(err))
	}
}

func heapAfterGC() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
