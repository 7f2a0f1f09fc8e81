package transport

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/xblgo/fgrl/mock"
)

// TestSecretsNeverLogged exercises every logged path (retries, waits, local
// refusals, server 429s, the cache's fail-fast, a failed refresh) with a
// token and a Signature on the request: neither may appear in a log record
// or an error.
func TestSecretsNeverLogged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs logBuffer
		h := mock.Must(mock.New(mock.Config{Faults: mock.Faults{ErrorRate: 0.3, Seed: 3}}))
		tr := &Transport{Base: h, TitleID: title, Logger: slog.New(slog.NewJSONHandler(&logs, nil)),
			RefreshToken: func(*http.Request) (string, error) { return "", errors.New("no refresh") }}
		xbl := &Transport{Base: h, TitleID: title, DisableBudget: true, Logger: slog.New(slog.NewJSONHandler(&logs, nil))}
		tok := mock.Token(xuid1, title)
		secret := tok[strings.Index(tok, ";")+1:]
		const sig = "AAAAAQHaSignatureSecret"
		var errs []string
		for _, rt := range []*Transport{tr, xbl} {
			for i := 0; i < 40; i++ {
				req, _ := http.NewRequestWithContext(context.Background(), "GET", profileURL, nil)
				req.Header.Set("Authorization", tok)
				req.Header.Set("Signature", sig)
				if resp, err := rt.RoundTrip(req); err != nil {
					errs = append(errs, err.Error())
				} else {
					resp.Body.Close()
				}
			}
		}
		out := logs.String() + strings.Join(errs, "\n")
		if !strings.Contains(out, "refused") || !strings.Contains(out, "retry") {
			t.Fatalf("the run did not exercise refusals and retries:\n%.2000s", out)
		}
		for _, s := range []string{secret, sig} {
			if strings.Contains(out, s) {
				t.Errorf("%q appears in logs or errors", s)
			}
		}
	})
}

// TestInsecureGuardAnyCase: a token or signature under a header key set
// directly in another case (which net/http sends as it is) is still never
// sent over plain http to a host other than loopback.
func TestInsecureGuardAnyCase(t *testing.T) {
	for _, key := range []string{"authorization", "AUTHORIZATION", "signature"} {
		t.Run(key, func(t *testing.T) {
			var s sends
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) { s.add(); return respond(r, 200, ""), nil })
			tr := &Transport{Base: base, TitleID: title}
			req, _ := http.NewRequest("GET", "http://profile.example.net/users/me", nil)
			req.Header[key] = []string{mock.Token(xuid1, title)}
			if _, err := tr.RoundTrip(req); !errors.Is(err, ErrInsecure) || s.count() != 0 {
				t.Errorf("RoundTrip = %v with %d sends, want ErrInsecure and nothing sent", err, s.count())
			}
		})
	}
}

// TestRedirectDropsCredentials: following a redirect to another host, no
// credential header goes along (http.Client drops Authorization but not
// Signature); to the same host, both stay. Over real loopback.
func TestRedirectDropsCredentials(t *testing.T) {
	got := make(chan http.Header, 1)
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Clone()
	}))
	defer target.Close()
	targetURL := strings.Replace(target.URL, "127.0.0.1", "localhost", 1) // another host
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/same" {
			if r.URL.Query().Get("done") != "" {
				got <- r.Header.Clone()
				return
			}
			http.Redirect(w, r, "/same?done=1", http.StatusFound)
			return
		}
		http.Redirect(w, r, targetURL+"/elsewhere", http.StatusFound)
	}))
	defer origin.Close()
	client := &http.Client{Transport: &Transport{TitleID: title, DisableBudget: true}}
	for _, tt := range []struct {
		path string
		kept bool
	}{{"/away", false}, {"/same", true}} {
		req, _ := http.NewRequest("GET", origin.URL+tt.path, nil)
		req.Header.Set("Authorization", mock.Token(xuid1, title))
		req.Header["signature"] = []string{"AAAAAQHaSignatureSecret"}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		h := <-got
		if has := h.Get("Signature") != "" && h.Get("Authorization") != ""; has != tt.kept {
			t.Errorf("%s: credentials at the target: Authorization %q, Signature %q; want kept=%v",
				tt.path, h.Get("Authorization"), h.Get("Signature"), tt.kept)
		}
	}
}

// TestRedirectWithoutResponseRequest: a base RoundTripper that leaves
// Response.Request empty (a stub, a recorder, a cache) still gets no
// credentials sent to another host on a redirect, nor a refreshed token
// after that host's 401; within one host they stay.
func TestRedirectWithoutResponseRequest(t *testing.T) {
	tests := []struct {
		to   string
		kept bool
	}{
		{"https://evil.example/steal", false},
		{"https://profile.xboxlive.com/users/me/profile/settings?again=1", true},
	}
	for _, tt := range tests {
		t.Run(tt.to, func(t *testing.T) {
			var sent []http.Header
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				sent = append(sent, r.Header.Clone())
				h := http.Header{}
				status := http.StatusFound
				if r.URL.Host == "evil.example" || r.URL.RawQuery == "again=1" {
					status = http.StatusUnauthorized
				} else {
					h.Set("Location", tt.to)
				}
				return &http.Response{StatusCode: status, Header: h, Body: http.NoBody}, nil // no Request
			})
			refreshed := 0
			client := &http.Client{Transport: &Transport{Base: base, TitleID: title, DisableBudget: true,
				RefreshToken: func(*http.Request) (string, error) { refreshed++; return mock.Token(xuid1, title), nil }}}
			req, _ := http.NewRequest("GET", "https://profile.xboxlive.com/users/me/profile/settings", nil)
			req.Header.Set("Authorization", mock.Token(xuid1, title))
			req.Header.Set("Signature", "AAAAAQHaSignatureSecret")
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if len(sent) < 2 {
				t.Fatalf("%d requests sent", len(sent))
			}
			h := sent[1]
			if has := h.Get("Signature") != ""; has != tt.kept {
				t.Errorf("after the redirect: Signature %q; want kept=%v", h.Get("Signature"), tt.kept)
			}
			if !tt.kept && (refreshed != 0 || len(sent) != 2) {
				t.Errorf("the other host's 401 got a token: %d refreshes, %d requests", refreshed, len(sent))
			}
		})
	}
}
