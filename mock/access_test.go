package mock

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// TestAdminAccess: the admin endpoints obey loopback peers that name the
// mock by address or localhost; a web page's rebound name is refused
// whoever the peer, and other peers need the token.
func TestAdminAccess(t *testing.T) {
	tests := []struct {
		name          string
		access        AdminAccess
		host, peer    string
		bearer, query string
		want          int
	}{
		{"loopback peer, IP host", AdminAccess{}, "127.0.0.1:8080", "127.0.0.1:5000", "", "", 204},
		{"loopback peer, localhost", AdminAccess{}, "localhost:8080", "[::1]:5000", "", "", 204},
		{"loopback peer, IPv6 host", AdminAccess{}, "[::1]:8080", "[::1]:5000", "", "", 204},
		{"DNS rebinding", AdminAccess{}, "attacker.example:8080", "127.0.0.1:5000", "", "", 403},
		{"DNS rebinding, with the token", AdminAccess{Token: "t0k"}, "attacker.example", "127.0.0.1:5000", "t0k", "", 403},
		{"a name the mock was given", AdminAccess{Hosts: []string{"mock.internal"}}, "MOCK.internal:8080", "127.0.0.1:5000", "", "", 204},
		{"remote peer, no token configured", AdminAccess{}, "192.0.2.7:8080", "192.0.2.1:5000", "", "", 403},
		{"remote peer, no token sent", AdminAccess{Token: "t0k"}, "192.0.2.7:8080", "192.0.2.1:5000", "", "", 401},
		{"remote peer, wrong token", AdminAccess{Token: "t0k"}, "192.0.2.7:8080", "192.0.2.1:5000", "t0K", "", 401},
		{"remote peer, bearer token", AdminAccess{Token: "t0k"}, "192.0.2.7:8080", "192.0.2.1:5000", "t0k", "", 204},
		{"remote peer, query token", AdminAccess{Token: "t0k"}, "192.0.2.7:8080", "192.0.2.1:5000", "", "t0k", 204},
		{"malformed peer", AdminAccess{}, "127.0.0.1", "nonsense", "", "", 403},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log bytes.Buffer
			h := Must(New(Config{Logger: slog.New(slog.NewTextHandler(&log, nil))}))
			getProfileVia(t, h)
			u := "/_fgrl/api/keys"
			if tt.query != "" {
				u += "?token=" + tt.query
			}
			req := httptest.NewRequest("DELETE", u, nil)
			req.Host, req.RemoteAddr = tt.host, tt.peer
			if tt.bearer != "" {
				req.Header.Set("Authorization", "Bearer "+tt.bearer)
			}
			rec := httptest.NewRecorder()
			h.Admin(tt.access, nil).ServeHTTP(rec, req)
			if rec.Code != tt.want {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.want, rec.Body)
			}
			kept := len(h.Overview(context.Background()).Keys) == 1
			if refused := tt.want != 204; refused != kept || refused != strings.Contains(log.String(), "admin request refused") {
				t.Errorf("refused %v, but the counts kept: %v; log: %s", refused, kept, log.String())
			}
		})
	}
}

// getProfileVia counts one profile read at h.
func getProfileVia(t *testing.T, h *Handler) {
	t.Helper()
	req := httptest.NewRequest("GET", "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag", nil)
	req.Header.Set("Authorization", Token(xuid1, title1))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Fatalf("profile read: %d %s", rec.Code, rec.Body)
	}
}

// peekCounter is a ServerStore that counts Peek calls: one per listed key
// per snapshot.
type peekCounter struct {
	throttle.MemoryServerStore
	peeks atomic.Int64
}

func (p *peekCounter) Peek(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time) (throttle.Decision, error) {
	p.peeks.Add(1)
	return p.MemoryServerStore.Peek(ctx, k, l, now)
}

// TestEventsShared: however many live pages are open, one snapshot is made
// a tick; past maxStreams a page is refused with 503; each stream ends when
// its request's context does (a server shutting down).
func TestEventsShared(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &peekCounter{}
		h := Must(New(Config{Store: store}))
		getProfileVia(t, h)
		admin := h.Admin(AdminAccess{}, nil)
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
		time.Sleep(10*time.Second - time.Nanosecond) // ten ticks after the first snapshot
		if n := store.peeks.Load(); n != 10 {
			t.Errorf("%d snapshots of one key for %d pages over 10 ticks, want 10", n, maxStreams)
		}
		shutdown()
		wg.Wait() // every stream ended
	})
}

// TestHugeIDsRefused: a token minted for a 10 KB title (or xuid) is refused
// with 401: such ids would become FGRL keys whose size, times the key cap,
// no memory holds.
func TestHugeIDsRefused(t *testing.T) {
	h := NewHandler()
	for _, tok := range []string{Token(xuid1, strings.Repeat("9", 10<<10)), Token(strings.Repeat("9", 10<<10), title1)} {
		req := httptest.NewRequest("GET", "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag", nil)
		req.Header.Set("Authorization", tok)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if keys := h.Overview(context.Background()).Keys; rec.Code != http.StatusUnauthorized || len(keys) != 0 {
			t.Errorf("status %d, %d keys", rec.Code, len(keys))
		}
	}
}
