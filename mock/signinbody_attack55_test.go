package mock

// attack55: the mock's sign-in bodies ("a form or JSON body over 64 KiB is
// refused whole (400), and JSON with anything after its value too") at
// their edges, and the relying-party check of user XSTS tokens at host
// spellings.

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// attack55XSTSBody is an XSTS request for rp with the user token ut, padded
// after its value with pad.
func attack55XSTSBody(ut, rp, pad string) string {
	return `{"RelyingParty": "` + rp + `", "TokenType": "JWT", "Properties": {"UserTokens": ["` + ut + `"], "SandboxId": "RETAIL"}}` + pad
}

// held: RELIABILITY.md (2026-12-07, 03:30) "a form or JSON body over 64
// KiB is refused whole (400), and JSON with anything after its value too";
// readJSON's godoc "with anything but white space after the value, is
// refused (400)". An XSTS request padded with white space to exactly 64
// KiB is answered 200; one byte more is refused whole (413 from the
// mock's body bound, before readJSON: refused whole all the same); a trailing NUL, a second
// JSON value, a trailing comma or "x" are 400; a body of exactly 64 KiB
// sent chunked (no Content-Length) is 200, 64 KiB + 1 chunked 413.
func TestAttack55SignInBodyEdges(t *testing.T) {
	h := Must(New(Config{}))
	ut := attack52UserToken(t, h)
	base := attack55XSTSBody(ut, "http://xboxlive.com", "")
	pad := func(n int, ws string) string { return base + strings.Repeat(ws, n-len(base)) }
	for name, c := range map[string]struct {
		body string
		want int
	}{
		"64 KiB of spaces":        {pad(64<<10, " "), 200},
		"64 KiB of CRLF/tabs":     {pad(64<<10, "\r\n\t ")[:64<<10], 200},
		"64 KiB + 1":              {pad(64<<10+1, " "), 413},
		"trailing NUL":            {base + "\x00", 400},
		"second value":            {base + " {}", 400},
		"trailing comma":          {base + ",", 400},
		"trailing x":              {base + "x", 400},
		"trailing newline":        {base + "\n", 200},
		"leading BOM-less spaces": {"   \n" + base, 200},
	} {
		t.Run(name, func(t *testing.T) {
			st, b := post(t, h, "https://xsts.auth.xboxlive.com/xsts/authorize", "application/json", c.body)
			if st != c.want {
				t.Errorf("%d bytes: %d %.200s, want %d", len(c.body), st, b, c.want)
			}
		})
	}
	for name, c := range map[string]struct {
		body string
		want int
	}{"chunked 64 KiB": {pad(64<<10, " "), 200}, "chunked 64 KiB + 1": {pad(64<<10+1, " "), 413}} {
		t.Run(name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", "https://xsts.auth.xboxlive.com/xsts/authorize", io.MultiReader(strings.NewReader(c.body)))
			req.ContentLength = -1
			req.Header.Set("Content-Type", "application/json")
			resp, err := h.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.want {
				t.Errorf("%d %.200s, want %d", resp.StatusCode, b, c.want)
			}
		})
	}
}

// held: RELIABILITY.md (2026-12-07, 03:30) "a form ... body over 64 KiB is
// refused whole (400)": the device-code form at exactly 64 KiB is taken,
// at 64 KiB + 1 refused whole (400).
func TestAttack55SignInFormEdges(t *testing.T) {
	h := Must(New(Config{}))
	base := "client_id=000000004C12AE6F&response_type=device_code&scope=service%3A%3Auser.auth.xboxlive.com%3A%3AMBI_SSL&pad="
	for n, want := range map[int]int{64 << 10: 200, 64<<10 + 1: 400} {
		st, b := post(t, h, "https://login.live.com/oauth20_connect.srf", "application/x-www-form-urlencoded", base+strings.Repeat("a", n-len(base)))
		if st != want {
			t.Errorf("a %d-byte form: %d %.200s, want %d", n, st, b, want)
		}
	}
}

// attack55Get reads url with the XSTS answer a, Host set to host ("" the URL's).
func attack55Get(t *testing.T, h *Handler, url, host string, a authAnswer) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if host != "" {
		req.Host = host
	}
	req.Header.Set("Authorization", "XBL3.0 x="+a.DisplayClaims.Xui[0]["uhs"]+";"+a.Token)
	req.Header.Set("x-xbl-contract-version", "2")
	resp, err := h.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, string(b)
}

// held: RELIABILITY.md (2026-12-07, 03:30) "taken only at the hosts the
// NSAL document gives its relying party (inventory.xboxlive.com,
// collections.mp.microsoft.com for licensing), 401 elsewhere". A user's
// licensing, music and accounts XSTS tokens at the profile service under
// every spelling the router takes for it (upper case, a port, a trailing
// dot, the Host header naming inventory.xboxlive.com while the URL names
// profile, and the other way round) are never answered 200; a token for
// http://xboxlive.com (and https://xboxlive.com) is taken at each
// spelling as before.
func TestAttack55PartyTokenHostSpellings(t *testing.T) {
	type target struct{ url, host string }
	targets := map[string]target{
		"plain":           {"https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag", ""},
		"upper":           {"https://PROFILE.XBOXLIVE.COM/users/me/profile/settings?settings=Gamertag", ""},
		"port":            {"https://profile.xboxlive.com:443/users/me/profile/settings?settings=Gamertag", ""},
		"trailing dot":    {"https://profile.xboxlive.com./users/me/profile/settings?settings=Gamertag", ""},
		"dot and port":    {"https://profile.xboxlive.com.:443/users/me/profile/settings?settings=Gamertag", ""},
		"host inventory":  {"https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag", "inventory.xboxlive.com"},
		"url inventory":   {"https://inventory.xboxlive.com/users/me/profile/settings?settings=Gamertag", "profile.xboxlive.com"},
		"host collection": {"https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag", "collections.mp.microsoft.com"},
	}
	for _, rp := range []string{"http://licensing.xboxlive.com", "http://music.xboxlive.com", "http://accounts.xboxlive.com", "http://xboxlive.com", "https://xboxlive.com"} {
		h := Must(New(Config{})) // one a party: the profile's burst of 10 a user
		ut := attack52UserToken(t, h)
		st, a, b := attack52XSTS(t, h, attack55XSTSBody(ut, rp, ""))
		if st != http.StatusOK {
			t.Fatalf("XSTS for %s: %d %s", rp, st, b)
		}
		xbox := rp == "http://xboxlive.com" || rp == "https://xboxlive.com"
		for name, tg := range targets {
			got, body := attack55Get(t, h, tg.url, tg.host, a)
			profile := tg.host == "" || tg.host == "profile.xboxlive.com"
			switch {
			case !xbox && got == http.StatusOK:
				t.Errorf("%s token at %s (%s, Host %q): 200 %.200s", rp, name, tg.url, tg.host, body)
			case xbox && profile && got != http.StatusOK:
				t.Errorf("%s token at %s (%s, Host %q): %d %.200s, want 200", rp, name, tg.url, tg.host, got, body)
			}
		}
	}
	_ = json.Marshal
}
