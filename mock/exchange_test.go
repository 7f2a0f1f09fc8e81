package mock

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// TestExchangesStayTheirRequests: ServeHTTP reuses its exchanges, and
// under many users at once (in process, over HTTP/1.1 and over HTTP/2),
// with resets and truncations cutting answers short, each answer and each
// record is its own request's: the user its token names (none without
// one), the body it sent (or none, for a request answered before its body
// was read: a 429, a fault), the status it was answered (or 0 for one cut
// short, which a client may have sent again) (run with -race).
func TestExchangesStayTheirRequests(t *testing.T) {
	const users, each = 24, 40
	h := NewHandler()
	if err := h.SetFaults(Faults{ResetRate: 0.05, TruncateRate: 0.05, ErrorRate: 0.05, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	h2 := httptest.NewUnstartedServer(h)
	h2.EnableHTTP2 = true
	h2.StartTLS()
	defer h2.Close()
	h1 := httptest.NewServer(h)
	defer h1.Close()
	clients := []struct {
		base string
		rt   http.RoundTripper
	}{{"", h}, {h1.URL, h1.Client().Transport}, {h2.URL, h2.Client().Transport}}

	type sent struct {
		xuid, body string
		status     int // 0: no answer (a reset, a truncation)
	}
	var mu sync.Mutex
	sents := map[string]sent{} // by the marker in their query
	var wg sync.WaitGroup
	for u := range users {
		xuid := strconv.Itoa(2533274790000000 + u)
		tok := Token(xuid, title1)
		wg.Go(func() {
			for i := range each {
				marker := xuid + "-" + strconv.Itoa(i)
				s := sent{xuid: xuid}
				method, path, auth := http.MethodGet, "/users/me/profile/settings?settings=Gamertag&m="+marker, tok
				switch i % 4 {
				case 1:
					method, path = http.MethodPost, "/users/batch/profile/settings?m="+marker
					s.body = `{"userIds":["` + xuid + `"],"settings":["Gamertag","` + marker + `"]}`
				case 2:
					auth, s.xuid = "", ""
				}
				cl := clients[(u+i)%len(clients)]
				url := "https://profile.xboxlive.com" + path
				if cl.base != "" {
					url = cl.base + path
				}
				req, err := http.NewRequest(method, url, strings.NewReader(s.body))
				if err != nil {
					t.Error(err)
					return
				}
				req.Host = "profile.xboxlive.com"
				if auth != "" {
					req.Header.Set("Authorization", auth)
				}
				resp, err := cl.rt.RoundTrip(req)
				if err == nil {
					var b []byte
					b, err = io.ReadAll(resp.Body)
					resp.Body.Close()
					if err == nil {
						s.status = resp.StatusCode
					}
					if err == nil && resp.StatusCode == http.StatusOK && !strings.Contains(string(b), `"id":"`+xuid+`"`) {
						t.Errorf("%s %s as %s: answer %s", method, path, xuid, b)
					}
				}
				if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !strings.Contains(err.Error(), "reset") && !strings.Contains(err.Error(), "EOF") && !strings.Contains(err.Error(), "INTERNAL_ERROR") {
					t.Errorf("%s %s: %v", method, path, err)
				}
				mu.Lock()
				sents[marker] = s
				mu.Unlock()
			}
		})
	}
	wg.Wait()

	calls := h.Calls(CallFilter{})
	if len(calls) < users*each {
		t.Fatalf("%d calls recorded, want at least %d", len(calls), users*each)
	}
	for _, c := range calls {
		_, marker, _ := strings.Cut(c.URL, "m=")
		s, ok := sents[marker]
		if !ok {
			t.Errorf("a record of %s that no request sent", c.URL)
			continue
		}
		if c.XUID != s.xuid || !strings.HasPrefix(s.body, string(c.body)) || (c.Status != 0 && s.status != 0 && c.Status != s.status) {
			t.Errorf("record of %s: xuid %q, body %q, status %d; sent as %q with %q, answered %d", c.URL, c.XUID, c.body, c.Status, s.xuid, s.body, s.status)
		}
	}
}
