package transport

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// ownTimeout is a shared store that is down: each call waits for its own
// timeout, then fails with an error wrapping context.DeadlineExceeded (as
// a store built on a client that reports its own deadline that way does).
type ownTimeout struct {
	throttle.MemoryBudgetStore
	wait time.Duration
}

func (s *ownTimeout) Reserve(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time, maxWait time.Duration) (throttle.Admission, error) {
	time.Sleep(s.wait)
	return throttle.Admission{}, fmt.Errorf("budget store: no answer within %v: %w", s.wait, context.DeadlineExceeded)
}

// TestStoreTimeoutNotCallersEnd: the shared store is down and fails
// each call after its own 50 ms timeout; the callers' deadlines are 40 ms,
// so when the store gives up the caller's deadline has also passed.
// The store's failure is an outage: logged once and counted as budget
// errors. Before: errors.Is(err, ctx.Err()) held, so every failure read as
// the caller's own end: no log line, no budget error, no probe pacing.
func TestStoreTimeoutNotCallersEnd(t *testing.T) {
	var logs logBuffer
	shared := &ownTimeout{wait: 50 * time.Millisecond}
	tr := &Transport{Budget: shared, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	tr.init()
	f := tr.budget.(*failover)
	k := throttle.Key{User: "u", Title: "t", Scope: "profile"}
	l := throttle.Limit{Burst: 2, Sustain: 10}
	for range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), shared.wait-10*time.Millisecond)
		f.Reserve(ctx, k, l, time.Now(), 0)
		cancel()
	}
	if out := logs.String(); !strings.Contains(out, "failed") {
		t.Errorf("a store down for 3 calls logged no outage:\n%s", out)
	}
	if st := tr.Stats(); st.BudgetErrors == 0 {
		t.Errorf("BudgetErrors = 0 after 3 calls the store failed by its own timeout, want 3")
	}
}
