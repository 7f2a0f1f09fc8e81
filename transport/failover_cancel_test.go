package transport

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/redistest"
	"github.com/xblgo/fgrl/throttle"
	"github.com/xblgo/fgrl/throttle/redisstore"
)

// TestCallerCancelIsNoOutage: a caller whose context is cancelled (a
// client giving up) makes the shared store's Reserve end with
// context.Canceled; Redis is up. The transport logged "shared budget store
// failed" and counted a budget error for it, a false outage (and a
// "recovered" line 5 s later) per cancelled call.
func TestCallerCancelIsNoOutage(t *testing.T) {
	srv := redistest.Start(t)
	var logs logBuffer
	tr := &Transport{Budget: &redisstore.Store{Client: srv.Client()}, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	tr.init()
	f := tr.budget.(*failover)
	k := throttle.Key{User: "u", Title: "t", Scope: "profile"}
	l := throttle.Limit{Burst: 2, Sustain: 10}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f.Reserve(ctx, k, l, time.Now(), 0)
	f.Snapshot(ctx, k, l, time.Now())
	if a, err := f.Reserve(context.Background(), k, l, time.Now(), 0); err != nil || !a.Allowed {
		t.Fatalf("Reserve = %+v, %v", a, err)
	}
	if out := logs.String(); strings.Contains(out, "failed") {
		t.Errorf("a cancelled caller logged an outage of a working Redis:\n%s", out)
	}
	if st := tr.Stats(); st.BudgetErrors != 0 {
		t.Errorf("BudgetErrors = %d after cancelled callers only, want 0", st.BudgetErrors)
	}
}
