package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/xblgo/fgrl/internal/xblauth"
	"github.com/xblgo/fgrl/mock"
)

// renewEcho is a service behind the mock (which signs in) that answers the
// first token it sees 401, so that the transport renews it, and echoes the
// renewed one: in a redirect to itself that never ends (net/http's error
// quotes the last Location), or in a 429's headers.
type renewEcho struct {
	mu      sync.Mutex
	first   string
	renewed string
	mode    string
}

func (s *renewEcho) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, tok, _ := strings.Cut(r.Header.Get("Authorization"), ";")
	s.mu.Lock()
	switch {
	case s.first == "":
		s.first = tok
	case tok != "" && tok != s.first:
		s.renewed = tok
	}
	first, renewed, mode := tok == s.first, s.renewed, s.mode
	s.mu.Unlock()
	switch {
	case first:
		w.WriteHeader(http.StatusUnauthorized)
	case mode == "loop": // a redirected request carries no token: the last one renewed is echoed
		http.Redirect(w, r, "/r/"+renewed+"?t="+renewed, http.StatusFound)
	default:
		w.Header().Set("Location", "/r/"+renewed)
		w.Header().Set("Set-Cookie", "s="+renewed)
		w.Header().Set("WWW-Authenticate", "XBL3.0 x="+renewed)
		w.Header().Set("Retry-After", "100")
		w.WriteHeader(http.StatusTooManyRequests)
	}
}

// The token the transport renewed after a 401 is never printed: not in
// the error quoting a redirect's Location, not in a 429's headers under -i
// or -v, not in the -v trace or a load run's summary.
func TestCallNeverPrintsRenewedToken(t *testing.T) {
	setConfigDir(t, t.TempDir())
	setenv(t, "XBL_TOKEN", "")
	setenv(t, "XBLCALL_MOCK", "")
	svc, h := &renewEcho{}, mock.NewHandler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Host == "atk.xboxlive.com" {
			svc.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	if code, out, errs := xblcall(t, "login", "--via", srv.URL); code != 0 {
		t.Fatalf("login: exit %d %s %s", code, out, errs)
	}
	for _, tc := range []struct {
		mode string
		args []string
	}{
		{"loop", nil},
		{"loop", []string{"-v"}},
		{"loop", []string{"-n", "2", "--json"}},
		{"loop", []string{"-n", "2", "-v"}},
		{"429", []string{"-i"}},
		{"429", []string{"-v"}},
	} {
		svc.mu.Lock()
		svc.first, svc.renewed, svc.mode = "", "", tc.mode
		svc.mu.Unlock()
		args := append(append([]string{"call", "--via", srv.URL, "--retry-window", "1s", "--max-wait", "0s"}, tc.args...), "https://atk.xboxlive.com/users/me")
		code, out, errs := xblcall(t, args...)
		svc.mu.Lock()
		renewed := svc.renewed
		svc.mu.Unlock()
		if renewed == "" {
			t.Errorf("%s %v: exit %d: no token renewed: %.300s", tc.mode, tc.args, code, errs)
			continue
		}
		if i := strings.Index(out+errs, renewed); i >= 0 {
			t.Errorf("%s %v: exit %d: the renewed token printed: ...%q...", tc.mode, tc.args, code, (out + errs)[max(i-100, 0):i])
		}
	}
}

// TestSentRunBound: a load run's record keeps every token any of its calls
// sent, so that each call's output is scrubbed of the others', and the
// URLs' credentials up to maxSent and maxSentBytes, however many calls
// are redirected to new ones.
func TestSentRunBound(t *testing.T) {
	run := withSent(context.Background())
	var last xblauth.Secrets
	for i := range 3000 {
		ctx := withSent(run)
		req, _ := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("https://atk.xboxlive.com/r?access_token=query-token-%06d-%s", i, strings.Repeat("q", 200)), nil)
		if i%1000 == 0 { // a renewal
			req.Header.Set("Authorization", fmt.Sprintf("XBL3.0 x=1;renewed-token-%06d", i))
		}
		last = callSecrets(req)
	}
	rs := run.Value(sentKey{}).(*sent)
	if rs.n > maxSent || rs.bytes > maxSentBytes || len(rs.ss) > maxSent+3*2*14 { // and 3 tokens, each whole and alone, in at most 14 forms
		t.Errorf("the run's record: %d entries, %d counted, %d bytes; want at most %d and %d bytes", len(rs.ss), rs.n, rs.bytes, maxSent, maxSentBytes)
	}
	for _, tok := range []string{"renewed-token-000000", "renewed-token-002000"} {
		if got := last.Scrub("echo " + tok); got != "echo [redacted]" {
			t.Errorf("the last call's output: %q, want the token %s another call sent scrubbed", got, tok)
		}
	}
}
