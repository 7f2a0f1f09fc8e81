package mock

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

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
