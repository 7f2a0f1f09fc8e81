package admin

import (
	"net/http"
	"strings"
	"testing"

	"github.com/xblgo/fgrl/mock"
)

// TestCheckFailsClosed: POST /_fgrl/api/check passes (200) only on a
// check it ran whole. Before: an empty body, {} and a body whose second
// object was never read (it named an unknown field) all answered 200
// {"ok":true}.
func TestCheckFailsClosed(t *testing.T) {
	srv := serveAll(t, mock.NewHandler())
	for _, body := range []string{
		``,
		`{}`,
		`{"expect":[]}`,
		`{"no429":false}`,
		`{"no429":true}{"bogus":1}`,
		`{"no429":true} trailing`,
		`{"no429":true}}`,
	} {
		var e apiError
		if code := api(t, srv, "POST", "/_fgrl/api/check", body, &e); code != 400 || e.Error == "" {
			t.Errorf("check %q: %d %+v, want 400", body, code, e)
		}
	}
	var res mock.CheckResult
	getProfile(t, srv)
	if code := api(t, srv, "POST", "/_fgrl/api/check", `{"certify":true,"no429":true}`, &res); code != 200 || !res.OK {
		t.Errorf("certify of one call: %d %+v, want 200", code, res)
	}
	if code := api(t, srv, "POST", "/_fgrl/api/check", "{\"no429\":true}\n", &res); code != 200 || !res.OK {
		t.Errorf("a body with a newline after it: %d %+v, want 200", code, res)
	}
}

// TestCrossSiteFormRefused: a web page on another site posts a form to
// the mock on loopback (no preflight for a form's POST; the Host is
// 127.0.0.1, which the DNS-rebinding rule admits). Before: POST
// /_fgrl/api/reset answered 204 and forgot the calls, the 429 among them,
// so a check --no-429 after it passed. Now 403, the calls kept; the live
// page's own requests (same Origin) and requests with no Origin are served.
func TestCrossSiteFormRefused(t *testing.T) {
	h := mock.NewHandler()
	srv := serveAll(t, h)
	for range 12 { // profile: 10 per 15 s: a 429
		getProfile(t, srv)
	}
	for _, hdr := range [][2]string{{"Origin", "http://evil.example"}, {"Origin", "null"}, {"Sec-Fetch-Site", "cross-site"}} {
		req, _ := http.NewRequest("POST", srv.URL+"/_fgrl/api/reset", strings.NewReader("a=b"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set(hdr[0], hdr[1])
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || len(h.Calls(mock.CallFilter{})) != 12 {
			t.Errorf("%s: %s: %d, %d calls kept; want 403 and the 12 calls", hdr[0], hdr[1], resp.StatusCode, len(h.Calls(mock.CallFilter{})))
		}
	}
	req, _ := http.NewRequest("POST", srv.URL+"/_fgrl/api/check", strings.NewReader(`{"no429":true}`))
	req.Header.Set("Origin", srv.URL) // the live page's own
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("same-origin check: %d, want 422 (a 429 was seen)", resp.StatusCode)
	}
}
