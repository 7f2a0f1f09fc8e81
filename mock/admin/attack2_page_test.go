package admin

import (
	"net/http"
	"strings"
	"testing"

	"github.com/xblgo/fgrl/mock"
)

// TestLivePageNotFramed: the live page, whose buttons change the mock's
// faults, may not be framed by another page: a navigation carries no
// Origin, and a browser that sends no Sec-Fetch-Site (Safari before 16.4),
// or a page on another port of localhost (same-site), gets it served; the
// page's own requests in the frame are then same-origin, so a page laid
// over it could have its clicks set faults (clickjacking). Before: its
// Content-Security-Policy named no frame-ancestors, and no X-Frame-Options
// was sent.
func TestLivePageNotFramed(t *testing.T) {
	srv := serveAll(t, mock.NewHandler())
	resp, err := srv.Client().Get(srv.URL + Prefix)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	csp, xfo := resp.Header.Get("Content-Security-Policy"), resp.Header.Get("X-Frame-Options")
	if resp.StatusCode != 200 || !strings.Contains(csp, "frame-ancestors 'none'") || !strings.EqualFold(xfo, "DENY") {
		t.Errorf("the live page: %d, Content-Security-Policy %q, X-Frame-Options %q; want frame-ancestors 'none' and DENY", resp.StatusCode, csp, xfo)
	}
}

// TestLivePageUnderNoReferrer: the live page's own fault buttons work
// in a browser whose referrer policy is no-referrer (Firefox's
// network.http.referer.defaultPolicy 0, a privacy extension): its
// same-origin PUT then carries "Origin: null", and the browser vouches for
// it with "Sec-Fetch-Site: same-origin", a header no page can set. Before:
// 403, "no other site's page". A null Origin that the browser does not
// call same-origin (a sandboxed frame) is still refused.
func TestLivePageUnderNoReferrer(t *testing.T) {
	srv := serveAll(t, mock.NewHandler())
	for _, c := range []struct {
		site string
		want int
	}{{"same-origin", 200}, {"cross-site", 403}, {"same-site", 403}, {"", 403}} {
		req, _ := http.NewRequest("PUT", srv.URL+Prefix+"api/faults", strings.NewReader(`{"errorRate":0}`))
		req.Header.Set("Origin", "null")
		if c.site != "" {
			req.Header.Set("Sec-Fetch-Site", c.site)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("PUT faults, Origin null, Sec-Fetch-Site %q: %d, want %d", c.site, resp.StatusCode, c.want)
		}
	}
}
