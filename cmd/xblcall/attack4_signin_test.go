package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

// TestAttack4RealSignInNotSentToEnvMock: README.md:145 has the user
// `export XBLCALL_MOCK=http://127.0.0.1:8080` to reach a running mock, and
// README.md:154 promises "The stored token is sent only to `xboxlive.com`
// hosts" (RELIABILITY.md:355, TestLoginThenCall). A stored sign-in made
// against the real Microsoft account (no mock: its file holds no "via")
// and a shell where XBLCALL_MOCK is still set from a mock session: `xblcall
// call https://profile.xboxlive.com/...` renews the real account's tokens
// through the variable's loopback address (call.go storedToken: o.via
// from the variable wins over the stored sign-in's own), so its Microsoft
// refresh token goes, over plain http, to whatever listens on that port;
// what that process answers is then saved as the sign-in (OnRefresh). The
// real sign-in's credentials should go only where it was made (the
// Microsoft and Xbox hosts), never to a mock address it was not made with.
func TestAttack4RealSignInNotSentToEnvMock(t *testing.T) {
	t.Parallel()
	cfg := t.TempDir()
	setConfigDir(t, cfg)
	setenv(t, "XBL_TOKEN", "")
	const refresh = "REALREFRESHTOKENSECRET"
	const access = "REALMSAACCESSTOKENSECRET"
	st := stored{ClientID: "00000000-0000-0000-0000-000000000001", RelyingParty: "http://xboxlive.com", Sandbox: "RETAIL",
		Microsoft: &oauth2.Token{AccessToken: access, TokenType: "bearer", RefreshToken: refresh, Expiry: time.Now().Add(-time.Hour)}}
	b, _ := json.Marshal(st)
	p := filepath.Join(cfg, "fgrl", "signin.json")
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen bytes.Buffer
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		mu.Lock()
		seen.WriteString(r.Host + " " + r.URL.String() + " " + r.Header.Get("Authorization") + " " + string(body) + "\n")
		mu.Unlock()
		http.Error(w, `{"error":"invalid_grant"}`, http.StatusBadRequest)
	}))
	defer srv.Close()
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"call", "--no-retry", "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag"},
		&out, &errb, withTestEnv(t), func(e *env) {
			e.getenv = func(k string) string {
				if k == mockEnv {
					return srv.URL
				}
				return ""
			}
		})
	mu.Lock()
	got := seen.String()
	mu.Unlock()
	if strings.Contains(got, refresh) || strings.Contains(got, access) {
		t.Errorf("the real stored sign-in's credentials went to $XBLCALL_MOCK (%s); exit %d, %q; the loopback server saw:\n%s",
			srv.URL, code, errb.String(), got)
	}
}
