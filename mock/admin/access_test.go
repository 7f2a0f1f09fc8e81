package admin

import (
	"bytes"
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/xblgo/fgrl/mock"
)

// TestAdminAccess: the admin endpoints obey loopback peers that name the
// mock by address or localhost; a web page's rebound name is refused
// whoever the peer, and other peers need the token.
func TestAdminAccess(t *testing.T) {
	tests := []struct {
		name          string
		access        Config
		host, peer    string
		bearer, query string
		want          int
	}{
		{"loopback peer, IP host", Config{}, "127.0.0.1:8080", "127.0.0.1:5000", "", "", 204},
		{"loopback peer, localhost", Config{}, "localhost:8080", "[::1]:5000", "", "", 204},
		{"loopback peer, IPv6 host", Config{}, "[::1]:8080", "[::1]:5000", "", "", 204},
		{"DNS rebinding", Config{}, "attacker.example:8080", "127.0.0.1:5000", "", "", 403},
		{"DNS rebinding, with the token", Config{Token: "t0k"}, "attacker.example", "127.0.0.1:5000", "t0k", "", 403},
		{"a name the mock was given", Config{Hosts: []string{"mock.internal"}}, "MOCK.internal:8080", "127.0.0.1:5000", "", "", 204},
		{"remote peer, no token configured", Config{}, "192.0.2.7:8080", "192.0.2.1:5000", "", "", 403},
		{"remote peer, no token sent", Config{Token: "t0k"}, "192.0.2.7:8080", "192.0.2.1:5000", "", "", 401},
		{"remote peer, wrong token", Config{Token: "t0k"}, "192.0.2.7:8080", "192.0.2.1:5000", "t0K", "", 401},
		{"remote peer, bearer token", Config{Token: "t0k"}, "192.0.2.7:8080", "192.0.2.1:5000", "t0k", "", 204},
		{"remote peer, query token", Config{Token: "t0k"}, "192.0.2.7:8080", "192.0.2.1:5000", "", "t0k", 204},
		{"malformed peer", Config{}, "127.0.0.1", "nonsense", "", "", 403},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log bytes.Buffer
			h := mock.NewHandler()
			getProfileVia(t, h)
			access := tt.access
			access.Logger = slog.New(slog.NewTextHandler(&log, nil))
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
			Handler(h, access).ServeHTTP(rec, req)
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
func getProfileVia(t *testing.T, h *mock.Handler) {
	t.Helper()
	req := httptest.NewRequest("GET", "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag", nil)
	req.Header.Set("Authorization", mock.Token(xuid1, title1))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Fatalf("profile read: %d %s", rec.Code, rec.Body)
	}
}
