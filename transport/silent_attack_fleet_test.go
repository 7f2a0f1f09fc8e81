package transport

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/xblgo/fgrl/internal/redistest"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/throttle/redisstore"
)

// TestFleetBudgetSlowRedis: a fleet of 4 transports shares one healthy
// redis-server, reached through a proxy that holds each answer 40 ms (well
// within the stores' 400 ms Timeout). One user calls the same endpoint over
// and over through each transport in turn. First with patient callers (1 s
// deadlines): the fleet serves the published budget once. Then, against a
// fresh server, with callers whose deadlines (25 ms) end before Redis's
// answer: promise (b)/(f): the shared budget is not lost; the fleet must
// not serve more than it did with patient callers.
func TestFleetBudgetSlowRedis(t *testing.T) {
	run := func(deadline time.Duration) (served int, logs string) {
		srv := redistest.Start(t)
		var delay atomic.Int64
		delay.Store(int64(40 * time.Millisecond))
		addr := redistest.Slowed(t, srv.Addr, &delay)
		var lb logBuffer
		var fleet []*Transport
		for range 4 {
			rc := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
			t.Cleanup(func() { rc.Close() })
			fleet = append(fleet, &Transport{Base: mock.NewHandler(), TitleID: title, RetryWindow: -1,
				Logger: slog.New(slog.NewTextHandler(&lb, nil)), Budget: &redisstore.Store{Client: rc, Timeout: 400 * time.Millisecond}})
		}
		for round := range 15 {
			for _, tr := range fleet {
				ctx, cancel := context.WithTimeout(context.Background(), deadline)
				resp, err := get(t, tr, ctx, profileURL, "2533274790000001")
				cancel()
				if err == nil && resp.StatusCode == 200 {
					served++
				}
			}
			_ = round
		}
		return served, lb.String()
	}
	patient, _ := run(time.Second)
	hasty, logs := run(25 * time.Millisecond)
	t.Logf("fleet of 4, one user, 60 calls: %d served with 1 s deadlines, %d with 25 ms deadlines on a 40 ms Redis", patient, hasty)
	if hasty > patient {
		t.Errorf("fleet of 4 on a healthy Redis slowed to 40 ms: %d calls served with 25 ms deadlines, %d with 1 s deadlines; %d beyond the shared budget (outage logged %d times)", hasty, patient, hasty-patient, strings.Count(logs, "using a local budget"))
	}
}
