package admin

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/xblgo/fgrl/mock"
)

// TestAttackFaultsBodyPastBound: PUT /_fgrl/api/faults reads at most maxBody
// (64 KiB) of its body and applies what that prefix says: a body whose
// first object ({"errorRate":0.5}) is followed by 64 KiB of spaces and a
// second object is answered 200 and half the calls fail, the rest never
// read. The same cut was a break of the check (RELIABILITY.md:1361, "a
// body past the bound is refused 413, and the one read is decoded
// whole"); mock/admin/api.go:19 puts faults under the same bound, and
// docs/MOCK.md:481 "changes what it names": what the body names past the
// bound is neither applied nor refused.
func TestAttackFaultsBodyPastBound(t *testing.T) {
	h := mock.NewHandler()
	srv := serveAll(t, h)
	body := `{"errorRate":0.5}` + strings.Repeat(" ", maxBody) + `{"errorRate":0}`
	var e apiError
	code := api(t, srv, "PUT", "/_fgrl/api/faults", body, &e)
	if code < 400 || code > 499 {
		t.Errorf("a faults body of %d bytes, a second object past the %d read: %d, want a 4xx refusal; faults now %+v",
			len(body), maxBody, code, h.Faults())
	}
	if f := h.Faults(); f.ErrorRate != 0 {
		t.Errorf("the cut body was applied: errorRate %v", f.ErrorRate)
	}
}

// held: a page on this machine at another port (same-site for a browser,
// which ignores ports in a site), posting a form to the admin API with
// its Origin, or under a no-referrer policy ("Origin: null"), is refused
// (docs/MOCK.md:461-464: "a request whose Origin names another host, or
// whose Sec-Fetch-Site is cross-site, is refused 403"), and so is one
// through a name rebound to 127.0.0.1 that carries the right token.
func TestAttackSameSiteOtherPortRefused(t *testing.T) {
	h := mock.NewHandler()
	var log bytes.Buffer
	adm := Handler(h, Config{Token: "atk-ADMIN-TOKEN", Logger: slog.New(slog.NewTextHandler(&log, nil))})
	for _, c := range []struct{ host, origin, site, query string }{
		{"127.0.0.1:8080", "http://127.0.0.1:3000", "same-site", ""},
		{"127.0.0.1:8080", "null", "same-site", ""},
		{"localhost:8080", "http://localhost:3000", "same-site", ""},
		{"127.0.0.1:8080", "http://127.0.0.1:8080.evil.example", "", ""},
		{"attacker.example:8080", "", "", "?token=atk-ADMIN-TOKEN"},
		{"127.0.0.1.nip.io:8080", "", "", "?token=atk-ADMIN-TOKEN"},
	} {
		req := httptest.NewRequest("POST", Prefix+"api/reset"+c.query, strings.NewReader("x=1"))
		req.Host, req.RemoteAddr = c.host, "127.0.0.1:5000"
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if c.origin != "" {
			req.Header.Set("Origin", c.origin)
		}
		if c.site != "" {
			req.Header.Set("Sec-Fetch-Site", c.site)
		}
		rec := httptest.NewRecorder()
		adm.ServeHTTP(rec, req)
		if rec.Code != http.StatusForbidden {
			t.Errorf("reset with Host %s Origin %q Sec-Fetch-Site %q: %d, want 403", c.host, c.origin, c.site, rec.Code)
		}
	}
	if strings.Contains(log.String(), "atk-ADMIN-TOKEN") {
		t.Errorf("the refusals' log holds the admin token: %s", log.String())
	}
}

// held: the live page is the same bytes whatever its query (no reflected
// text), is never framed, and its event stream sends the overview only:
// a path, header or query a caller sends reaches neither
// (docs/MOCK.md:450-466).
func TestAttackLivePageReflectsNothing(t *testing.T) {
	h := mock.NewHandler()
	srv := serveAll(t, h)
	mark := "atk<script>alert(1)</script>"
	req, _ := http.NewRequest("GET", srv.URL+"/users/me/profile/settings?settings=Gamertag&x="+mark, nil)
	req.Host = "profile.xboxlive.com"
	req.Header.Set("Authorization", mock.Token(xuid1, title1))
	req.Header.Set("X-Atk", mark)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	resp, err = srv.Client().Get(srv.URL + Prefix + "?token=" + "%3Cscript%3E")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Equal(b, pageHTML) || bytes.Contains(b, []byte("<script>alert")) {
		t.Error("the live page is not its static bytes")
	}
	if resp.Header.Get("X-Frame-Options") != "DENY" || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
		t.Errorf("the live page may be framed: %v", resp.Header)
	}
	a := &admin{h: h}
	data, err := a.overviewJSON(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte("atk")) || bytes.Contains(data, []byte("script")) {
		t.Errorf("the live page's stream holds request text: %s", data)
	}
}
