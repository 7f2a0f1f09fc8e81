package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// hitCounter is a stand-in for a running mock that counts the requests it
// gets: a check passes, a service's GET is 200, a sign-in's POST 400.
func hitCounter(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		if r.Method == "POST" && !strings.HasPrefix(r.URL.Path, "/_fgrl/") {
			w.WriteHeader(http.StatusBadRequest)
		}
		w.Write([]byte(`{"ok":true,"failures":[]}`))
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

// TestMockAddressFromEnvironment: XBLCALL_MOCK gives check --mock, call
// --via and login --via the running mock's address; a flag given beats
// it; call --mock (the embedded mock) ignores it; an address call and
// login may not use (off loopback) is a usage error naming the variable.
// Before, only the flags named a running mock.
func TestMockAddressFromEnvironment(t *testing.T) {
	t.Parallel()
	fromEnv, envHits := hitCounter(t)
	fromFlag, flagHits := hitCounter(t)
	profile := "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag"
	tests := []struct {
		name      string
		env       string
		args      []string
		wantCode  int
		wantEnv   int32 // requests the mock the variable names got
		wantFlag  int32 // requests the mock the flag names got
		wantInErr string
	}{
		{"check reads the variable", fromEnv.URL, []string{"check", "--no-429"}, 0, 1, 0, ""},
		{"check: the flag beats it", fromEnv.URL, []string{"check", "--no-429", "--mock", fromFlag.URL}, 0, 0, 1, ""},
		{"call reads the variable", fromEnv.URL, []string{"call", "--token", "XBL3.0 x=1;t", profile}, 0, 1, 0, ""},
		{"call: --via beats it", fromEnv.URL, []string{"call", "--token", "XBL3.0 x=1;t", "--via", fromFlag.URL, profile}, 0, 0, 1, ""},
		{"call --mock: the embedded mock", fromEnv.URL, []string{"call", "--mock", profile}, 0, 0, 0, ""},
		{"login reads the variable", fromEnv.URL, []string{"login"}, 1, 1, 0, ""},
		{"call: off loopback", "http://192.0.2.1:8080", []string{"call", "--token", "XBL3.0 x=1;t", profile}, 2, 0, 0, "XBLCALL_MOCK"},
		{"login: off loopback", "http://192.0.2.1:8080", []string{"login"}, 2, 0, 0, "XBLCALL_MOCK"},
		{"check: not a URL", "mock:8080", []string{"check", "--no-429"}, 2, 0, 0, "XBLCALL_MOCK"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			envHits.Store(0)
			flagHits.Store(0)
			getenv := func(k string) string {
				if k == mockEnv {
					return tt.env
				}
				return ""
			}
			var out, errb bytes.Buffer
			code := run(context.Background(), tt.args, &out, &errb, withTestEnv(t), func(e *env) { e.getenv = getenv })
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d: %s", code, tt.wantCode, errb.String())
			}
			if got := envHits.Load(); got != tt.wantEnv {
				t.Errorf("the variable's mock got %d requests, want %d", got, tt.wantEnv)
			}
			if got := flagHits.Load(); got != tt.wantFlag {
				t.Errorf("the flag's mock got %d requests, want %d", got, tt.wantFlag)
			}
			if !strings.Contains(errb.String(), tt.wantInErr) {
				t.Errorf("stderr %q does not name %q", errb.String(), tt.wantInErr)
			}
		})
	}
}
