package mock

import (
	"errors"
	"net/http"
	"testing"
)

// TestDivert: every Xbox host, named in the URL or in the Host header,
// goes to the mock and never to the network; other hosts go to the base,
// or are refused without one.
func TestDivert(t *testing.T) {
	var leaked []string
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		leaked = append(leaked, r.URL.Host)
		return &http.Response{StatusCode: 299, Body: http.NoBody, Request: r}, nil
	})
	h := NewHandler()
	d := Divert(h, base)
	for _, url := range []string{
		"https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag",
		"https://clubhub.xboxlive.com/clubs/1",                        // a pattern's host
		"https://notaservice.xboxlive.com/x",                          // no rule: the mock's 404
		"https://collections.mp.microsoft.com/v9.0/collections/query", // the Store
		"https://login.live.com/oauth20_token.srf",
		"https://xsts.auth.xboxlive.com:443/xsts/authorize",
	} {
		req, _ := http.NewRequest("GET", url, nil)
		req.Header.Set("Authorization", Token(xuid1, title1))
		resp, err := d.RoundTrip(req)
		if err != nil || resp.StatusCode == 299 {
			t.Errorf("%s: %v %v, want the mock's answer", url, resp, err)
		}
		if resp != nil {
			resp.Body.Close()
		}
	}
	// A request for another server that names an Xbox host is the mock's.
	req, _ := http.NewRequest("GET", "https://api.example.com/users/me/profile/settings", nil)
	req.Host = "profile.xboxlive.com"
	if resp, err := d.RoundTrip(req); err != nil || resp.StatusCode == 299 {
		t.Errorf("Host profile.xboxlive.com at another server: %v %v", resp, err)
	}
	if len(leaked) != 0 {
		t.Errorf("left the machine: %v", leaked)
	}
	req, _ = http.NewRequest("GET", "https://api.example.com/x", nil)
	if resp, err := d.RoundTrip(req); err != nil || resp.StatusCode != 299 || len(leaked) != 1 {
		t.Errorf("another host: %v %v, want the base's answer", resp, err)
	}
	if _, err := Divert(h, nil).RoundTrip(req); !errors.Is(err, ErrNotDiverted) {
		t.Errorf("another host with no base: %v, want ErrNotDiverted", err)
	}
	if n := len(h.Calls(CallFilter{})); n != 7 {
		t.Errorf("the mock saw %d calls, want 7", n)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
