package transport

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/redistest"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/throttle/redisstore"
)

// TestFleetBudget: two transports (two processes' worth: two connections)
// sharing a Redis budget send exactly one burst between them, and keep
// working on their local budget when Redis dies.
func TestFleetBudget(t *testing.T) {
	srv := redistest.Start(t)
	server := &statusCounter{base: mock.NewHandler()}
	var logs logBuffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	fleet := []*Transport{
		{Base: server, TitleID: title, RetryWindow: -1, Logger: logger, Budget: &redisstore.Store{Client: srv.Client(), Timeout: 200 * time.Millisecond}},
		{Base: server, TitleID: title, RetryWindow: -1, Logger: logger, Budget: &redisstore.Store{Client: srv.Client(), Timeout: 200 * time.Millisecond}},
	}
	sent := 0
	for i := 0; i < 20; i++ {
		if _, err := get(t, fleet[i%2], context.Background(), profileURL, xuid1); err == nil {
			sent++
		}
	}
	if sent != 10 || server.count(429) != 0 {
		t.Errorf("fleet sent %d, server 429s %d; want 10 and 0", sent, server.count(429))
	}
	srv.Kill()
	// Another user: the local budgets take over; each process now keeps its
	// own, so calls go on, limited per process.
	ok := 0
	for i := 0; i < 12; i++ {
		if _, err := get(t, fleet[0], context.Background(), profileURL, xuid2); err == nil {
			ok++
		}
	}
	if ok != 10 {
		t.Errorf("during the outage %d calls went, want the local burst of 10", ok)
	}
	if n := strings.Count(logs.String(), "using a local budget"); n != 1 {
		t.Errorf("outage logged %d times by this transport, want 1:\n%s", n, logs.String())
	}
}
