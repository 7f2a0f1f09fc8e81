package admin

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/throttle"
)

// TestEvents: the event stream sends the overview at once and then every
// second, and ends when the client goes.
func TestEvents(t *testing.T) {
	srv := serveAll(t, mock.NewHandler())
	getProfile(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/_fgrl/events", nil)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q", ct)
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	var s mock.Overview
	if err != nil || !strings.HasPrefix(line, "data: ") || json.Unmarshal([]byte(line[6:]), &s) != nil || len(s.Keys) != 1 || s.Scopes["profile"].Requests != 1 {
		t.Errorf("first event %q: %v", line, err)
	}
}

// peekCounter is a ServerStore that counts Peek calls: one per listed key
// per overview.
type peekCounter struct {
	throttle.MemoryServerStore
	peeks atomic.Int64
}

func (p *peekCounter) Peek(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time) (throttle.Decision, error) {
	p.peeks.Add(1)
	return p.MemoryServerStore.Peek(ctx, k, l, now)
}

// TestEventsShared: however many live pages are open, one overview is made
// a tick; past maxStreams a page is refused with 503; each stream ends when
// its request's context does (a server shutting down).
func TestEventsShared(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &peekCounter{}
		h := mock.Must(mock.New(mock.Config{Store: store}))
		getProfileVia(t, h)
		admin := Handler(h, Config{})
		ctx, shutdown := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for range maxStreams {
			wg.Go(func() {
				req := httptest.NewRequestWithContext(ctx, "GET", "/_fgrl/events", nil)
				req.Host, req.RemoteAddr = "127.0.0.1:8080", "127.0.0.1:5000"
				admin.ServeHTTP(httptest.NewRecorder(), req)
			})
		}
		synctest.Wait()
		req := httptest.NewRequest("GET", "/_fgrl/events", nil)
		req.Host, req.RemoteAddr = "127.0.0.1:8080", "127.0.0.1:5000"
		rec := httptest.NewRecorder()
		admin.ServeHTTP(rec, req)
		if rec.Code != http.StatusServiceUnavailable {
			t.Errorf("page %d: status %d, want 503", maxStreams+1, rec.Code)
		}
		time.Sleep(10*time.Second - time.Nanosecond) // ten ticks after the first overview
		if n := store.peeks.Load(); n != 10 {
			t.Errorf("%d overviews of one key for %d pages over 10 ticks, want 10", n, maxStreams)
		}
		shutdown()
		wg.Wait() // every stream ended
	})
}
