package mock

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// WithAdmin serves a Handler's services and its admin endpoints (package
// mock/admin) on one handler. The admin endpoints import mock, so this
// package's tests cannot import them: the external test package sets
// WithAdmin (admin_ext_test.go), as export_test.go files hand internals to
// theirs the other way round.
var WithAdmin func(h *Handler) http.Handler

// serveAll serves h and its admin endpoints on one loopback address, as
// xblcall mock does.
func serveAll(t *testing.T, h *Handler) *httptest.Server {
	srv := httptest.NewServer(WithAdmin(h))
	t.Cleanup(srv.Close)
	return srv
}

// getProfile sends a profile read for xuid1 through the server as a game would,
// the service's name in the Host header.
func getProfile(t *testing.T, srv *httptest.Server) int {
	t.Helper()
	req, _ := http.NewRequest("GET", srv.URL+"/users/me/profile/settings?settings=Gamertag", nil)
	req.Host = "profile.xboxlive.com"
	req.Header.Set("Authorization", Token(xuid1, title1))
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// api sends an admin request and decodes its JSON answer into v (when not
// nil); it returns the status.
func api(t *testing.T, srv *httptest.Server, method, path, body string, v any) int {
	t.Helper()
	req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if v != nil {
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
	}
	return resp.StatusCode
}

// apiError is the admin API's error answer.
type apiError struct {
	Error string `json:"error"`
}
