package transport

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// flaky is a shared store that fails while down is set.
type flaky struct {
	throttle.MemoryBudgetStore
	down  bool
	calls int
}

var errDown = errors.New("store down")

func (f *flaky) Reserve(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time, maxWait time.Duration) (throttle.Admission, error) {
	f.calls++
	if f.down {
		return throttle.Admission{}, errDown
	}
	return f.MemoryBudgetStore.Reserve(ctx, k, l, now, maxWait)
}

func TestFailover(t *testing.T) {
	var logs logBuffer
	shared := &flaky{}
	tr := &Transport{Budget: shared, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	tr.init()
	f := tr.budget.(*failover)
	k := throttle.Key{User: "u", Title: "t", Scope: "profile"}
	l := throttle.Limit{Burst: 2, Sustain: 10}
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	reserve := func(at time.Duration) bool {
		a, err := f.Reserve(ctx, k, l, t0.Add(at), 0)
		if err != nil {
			t.Fatalf("failover returned %v", err)
		}
		return a.Allowed
	}
	reserve(0)
	shared.down = true
	// The outage: calls go on against the local budget, which still limits.
	if !reserve(time.Millisecond) || !reserve(2*time.Millisecond) || reserve(3*time.Millisecond) {
		t.Error("local budget during the outage: want 2 admitted, then refused")
	}
	if shared.calls != 2 {
		t.Errorf("shared store tried %d times in the first second of the outage, want 2 (one probe)", shared.calls)
	}
	reserve(1500 * time.Millisecond) // probes again after a second, still down
	shared.down = false
	reserve(3 * time.Second) // probe succeeds: the shared store is used again
	if strings.Contains(logs.String(), "recovered") {
		t.Error("recovery logged 1.5 s after the last error; want it after 5 s without one")
	}
	reserve(7 * time.Second) // 5.5 s without an error: recovered
	out := logs.String()
	if strings.Count(out, "failed; using a local budget") != 1 || strings.Count(out, "recovered") != 1 {
		t.Errorf("logs: want one outage and one recovery line:\n%s", out)
	}
	if st := tr.Stats(); st.BudgetErrors != 2 {
		t.Errorf("BudgetErrors = %d, want 2", st.BudgetErrors)
	}
}
