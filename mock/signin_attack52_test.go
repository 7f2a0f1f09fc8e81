package mock

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/xblgo/fgrl/internal/xblsign"
	"github.com/xblgo/fgrl/mock/tlsca"
)

// attack52UserToken signs the default account in as far as its user token.
func attack52UserToken(t *testing.T, h *Handler) string {
	t.Helper()
	a := signInFlow(t, h)
	var u struct{ Token string }
	if err := json.Unmarshal(a.userToken, &u); err != nil || u.Token == "" {
		t.Fatalf("user token: %v %s", err, a.userToken)
	}
	return u.Token
}

// attack52XSTS asks xsts/authorize with body and returns the status and answer.
func attack52XSTS(t *testing.T, h *Handler, body string) (int, authAnswer, []byte) {
	t.Helper()
	st, b := post(t, h, "https://xsts.auth.xboxlive.com/xsts/authorize", "application/json", body)
	var a authAnswer
	json.Unmarshal(b, &a)
	return st, a, b
}

// attack52Profile reads the profile with an XSTS answer's token.
func attack52Profile(t *testing.T, h *Handler, a authAnswer) int {
	t.Helper()
	if len(a.DisplayClaims.Xui) == 0 {
		t.Fatalf("no display claims in %+v", a)
	}
	req, _ := http.NewRequest("GET", "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag", nil)
	req.Header.Set("Authorization", "XBL3.0 x="+a.DisplayClaims.Xui[0]["uhs"]+";"+a.Token)
	req.Header.Set("x-xbl-contract-version", "2")
	resp, err := h.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// BREAK. MOCK.md, "A game backend's sign-in": "| an X-token for
// another relying party at an Xbox service | 401 | such tokens are issued
// for the relying party alone |", and token.go's errElsewhere: "at an Xbox
// service, a user's XSTS token issued for another relying party: such
// tokens are for their relying party alone". A service's X-token for
// http://licensing.xboxlive.com is refused at profile (boundIdentity takes
// http(s)://xboxlive.com only); a user's XSTS token for the same relying
// party is taken there, as one for http://xboxlive.com: the user token
// becomes a token for relying party A (licensing) used at a service that
// requires B (xboxlive.com).
func TestAttack52UserXSTSForLicensingRelyingPartyAtProfile(t *testing.T) {
	h := Must(New(Config{}))
	ut := attack52UserToken(t, h)
	for _, rp := range []string{"http://licensing.xboxlive.com", "http://music.xboxlive.com", "http://accounts.xboxlive.com"} {
		st, a, b := attack52XSTS(t, h, `{"RelyingParty": "`+rp+`", "TokenType": "JWT", "Properties": {"UserTokens": ["`+ut+`"], "SandboxId": "RETAIL"}}`)
		if st != http.StatusOK {
			t.Logf("XSTS for %s: %d %s (refused at issue: fine)", rp, st, b)
			continue
		}
		if got := attack52Profile(t, h, a); got != http.StatusUnauthorized {
			t.Errorf("a user's XSTS token for relying party %s read profile.xboxlive.com (which requires http://xboxlive.com): %d, want 401", rp, got)
		}
	}
}

// held: duplicate keys in an XSTS request ("RelyingParty" twice, or in
// another case) are read one way throughout: the token issued and the
// delegation claim agree on which relying party was honoured (the last),
// so a token for a title service's relying party with its DelegationToken
// never also reads the Xbox services (MOCK.md: "a user's XSTS token for a
// relying party not the Xbox services' ... refused at every Xbox service
// ..., 401"), and a token that reads them carries no DelegationToken.
func TestAttack52XSTSDuplicateRelyingParty(t *testing.T) {
	h := Must(New(Config{}))
	ut := attack52UserToken(t, h)
	props := `"Properties": {"UserTokens": ["` + ut + `"], "SandboxId": "RETAIL"}`
	bodies := []string{
		`{"RelyingParty": "http://xboxlive.com", "RelyingParty": "` + MockServiceRelyingParty + `", "TokenType": "JWT", ` + props + `}`,
		`{"RelyingParty": "` + MockServiceRelyingParty + `", "RelyingParty": "http://xboxlive.com", "TokenType": "JWT", ` + props + `}`,
		`{"relyingparty": "http://xboxlive.com", "RelyingParty": "` + MockServiceRelyingParty + `", "TokenType": "JWT", ` + props + `}`,
		`{"RelyingParty": "` + MockServiceRelyingParty + `", "RELYINGPARTY": "http://xboxlive.com", "TokenType": "JWT", ` + props + `}`,
		"\ufeff" + `{"RelyingParty": "` + MockServiceRelyingParty + `", "TokenType": "JWT", ` + props + `}`,
	}
	for i, body := range bodies {
		st, a, b := attack52XSTS(t, h, body)
		if st != http.StatusOK {
			t.Logf("body %d: %d %s", i, st, b)
			continue
		}
		delegated := a.DisplayClaims.Xui[0]["DelegationToken"] != ""
		profile := attack52Profile(t, h, a)
		t.Logf("body %d: delegation %v, profile %d", i, delegated, profile)
		if delegated && profile == http.StatusOK {
			t.Errorf("body %d: one XSTS answer carries a DelegationToken for %s and its token reads the Xbox services", i, MockServiceRelyingParty)
		}
		if !delegated && profile != http.StatusOK && !strings.Contains(body, "\ufeff") {
			t.Errorf("body %d: no delegation, and the token does not read profile (%d): which relying party was honoured?", i, profile)
		}
	}
}

// endless is a body that never ends: bytes of b forever, counting what
// was read.
type endless struct {
	b    []byte
	read atomic.Int64
}

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = e.b[int(e.read.Load()+int64(i))%len(e.b)]
	}
	e.read.Add(int64(len(p)))
	return len(p), nil
}

// held: every sign-in route reads a never-ending body to a bound and
// answers (RELIABILITY.md: "the mock reads a signed sign-in body up to 64
// KiB and answers 413 past it"; the brief's "memory must be bounded in
// bytes and every request must end"): no route reads more than 1 MiB of an
// endless body, every one returns, and none but the page (post.srf shows
// the page again) and the identity platform's devicecode (its break is
// TestAttack52OversizedSignInFormTaken) answers 2xx.
func TestAttack52SignInEndlessBodiesBounded(t *testing.T) {
	h := Must(New(Config{}))
	for _, rt := range signInRoutes {
		if rt.method != http.MethodPost {
			continue
		}
		path := strings.Replace(rt.path, "{tenant}", "consumers", 1)
		for _, fill := range []string{"client_id=c&", `{"RelyingParty": "`, "[", " ", "\x00\xff"} {
			body := &endless{b: []byte(fill)}
			req, _ := http.NewRequest(rt.method, "https://"+rt.host+path, body)
			req.Header.Set("Content-Type", "application/json")
			if rt.host == serviceAuthHost {
				r := newS2SRig(t, attack52Partner())
				req.TLS = r.conn
			}
			done := make(chan struct{})
			var status int
			go func() {
				defer close(done)
				defer func() { recover() }() // XSAS without a certificate aborts the handler
				resp, err := h.RoundTrip(req)
				if err == nil {
					status = resp.StatusCode
					resp.Body.Close()
				}
			}()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatalf("%s %s%s with an endless %q body: no answer in 20 s (read %d bytes)", rt.method, rt.host, path, fill, body.read.Load())
			}
			if n := body.read.Load(); n > 1<<20 {
				t.Errorf("%s%s read %d bytes of an endless %q body", rt.host, path, n, fill)
			}
			if status >= 200 && status < 300 && path != livePostPath && path != "/consumers/oauth2/v2.0/devicecode" {
				t.Errorf("%s%s answered %d to an endless %q body", rt.host, path, status, fill)
			}
		}
	}
}

// held: a body that never sends a byte (an io.Pipe never written nor
// closed) under a 1 s deadline: RoundTrip returns (every request ends).
func TestAttack52SignInStalledBodyEndsAtDeadline(t *testing.T) {
	h := Must(New(Config{}))
	for _, u := range []string{"https://user.auth.xboxlive.com/user/authenticate", "https://xsts.auth.xboxlive.com/xsts/authorize",
		"https://login.live.com/oauth20_token.srf", "https://login.microsoftonline.com/consumers/oauth2/v2.0/token",
		"https://sisu.xboxlive.com/authorize", "https://device.auth.xboxlive.com/device/authenticate"} {
		pr, pw := io.Pipe()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		req, _ := http.NewRequestWithContext(ctx, "POST", u, pr)
		req.Header.Set("Content-Type", "application/json")
		done := make(chan error, 1)
		start := time.Now()
		go func() {
			resp, err := h.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			t.Logf("%s: ended after %v (%v)", u, time.Since(start).Round(time.Millisecond), err)
		case <-time.After(15 * time.Second):
			t.Errorf("%s: a stalled body under a 1 s deadline still unanswered after 15 s", u)
		}
		cancel()
		pw.CloseWithError(errors.New("test over"))
	}
}

// held: hostile JSON at the JSON sign-in routes (deep nesting, a BOM,
// numbers for strings, UTF-16, trailing garbage after a body with no valid
// ticket) is refused without a 2xx or a 5xx, and a valid ticket never
// comes from it (FuzzSignInToken / FuzzServiceSignIn: "only tokens the
// mock minted are accepted"; "no 2xx, no panic").
func TestAttack52SignInHostileJSON(t *testing.T) {
	h := Must(New(Config{}))
	u16 := func(s string) string {
		var b strings.Builder
		for _, r := range utf16.Encode([]rune(s)) {
			b.WriteByte(byte(r))
			b.WriteByte(byte(r >> 8))
		}
		return b.String()
	}
	user := `{"RelyingParty": "http://auth.xboxlive.com", "TokenType": "JWT", "Properties": {"AuthMethod": "RPS", "SiteName": "user.auth.xboxlive.com", "RpsTicket": "t=forged"}}`
	bodies := map[string]string{
		"deep":           strings.Repeat("[", 60000) + strings.Repeat("]", 60000),
		"deep objects":   strings.Repeat(`{"a":`, 12000) + "1" + strings.Repeat("}", 12000),
		"bom":            "\ufeff" + user,
		"numbers":        `{"RelyingParty": 1, "TokenType": 2, "Properties": {"AuthMethod": 3, "RpsTicket": 4, "UserTokens": [5]}}`,
		"huge number":    `{"RelyingParty": 1` + strings.Repeat("0", 60000) + `}`,
		"utf16":          u16(user),
		"utf16 bom":      "\xff\xfe" + u16(user),
		"trailing":       user + `garbage{"x":`,
		"null":           "null",
		"nulls":          `{"RelyingParty": null, "Properties": null}`,
		"array":          `[` + user + `]`,
		"invalid utf8":   `{"RelyingParty": "http://auth.xboxlive.com\xff\xfe"}`,
		"dup properties": `{"Properties": {"RpsTicket": "t=x"}, "Properties": 7}`,
	}
	for _, u := range []string{"https://user.auth.xboxlive.com/user/authenticate", "https://xsts.auth.xboxlive.com/xsts/authorize",
		"https://sisu.xboxlive.com/authorize", "https://sisu.xboxlive.com/authenticate", "https://title.auth.xboxlive.com/title/authenticate",
		"https://device.auth.xboxlive.com/device/authenticate"} {
		for name, body := range bodies {
			st, b := post(t, h, u, "application/json", body)
			if st/100 == 2 || st/100 == 5 {
				t.Errorf("%s, %s body: %d %.200s", u, name, st, b)
			}
		}
	}
}

// held: a signed title/authenticate request replayed with its path,
// query, method, Authorization or body changed is refused (MOCK.md: "a
// signature that does not match the request ... | 403"; policy 1 covers
// "the file time, method, path and query, Authorization and the first 8192
// bytes of the body"); the unchanged request is then taken once and its
// replay refused ("or one presented before (title, SISU, XSTS) | 403").
func TestAttack52SignedTitleRequestMutations(t *testing.T) {
	h := Must(New(Config{}))
	d := newXALDevice(t, h, time.Now)
	dt, _ := d.deviceToken(t, h)
	body := map[string]any{"RelyingParty": "http://auth.xboxlive.com", "TokenType": "JWT",
		"Properties": map[string]any{"AuthMethod": "ProofOfPossession", "DeviceToken": dt, "TitleId": "1016898439"}}
	const u = "https://title.auth.xboxlive.com/title/authenticate"
	b, _ := json.Marshal(body)
	var sig string
	mutations := map[string]func(*http.Request){
		"query":         func(r *http.Request) { r.URL.RawQuery = "a=1" },
		"empty query":   func(r *http.Request) { r.URL.RawQuery = ""; r.URL.ForceQuery = true },
		"path":          func(r *http.Request) { r.URL.Path = "//title/authenticate" },
		"path case":     func(r *http.Request) { r.URL.Path = "/title/Authenticate" },
		"authorization": func(r *http.Request) { r.Header.Set("Authorization", "XBL3.0 x=1;y") },
		"body": func(r *http.Request) {
			r.Body = io.NopCloser(strings.NewReader(strings.Replace(string(b), "1016898439", "1016898438", 1)))
		},
		"body appended": func(r *http.Request) { r.Body = io.NopCloser(strings.NewReader(string(b) + " ")) },
		"body whitespace": func(r *http.Request) {
			r.Body = io.NopCloser(strings.NewReader(" " + string(b)))
		},
		"method": func(r *http.Request) { r.Method = "PUT" },
	}
	for name, m := range mutations {
		st, resp, _ := signedPost(t, h, d.key, time.Now(), u, body, func(r *http.Request) { sig = r.Header.Get("Signature"); m(r) })
		if st/100 == 2 {
			t.Errorf("signed request with %s changed after signing: %d %s", name, st, resp)
		}
	}
	// Another key's signature over the same request.
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if st, resp, _ := signedPost(t, h, other, time.Now(), u, body, nil); st != http.StatusForbidden {
		t.Errorf("another key's signature: %d %s, want 403", st, resp)
	}
	// The same request unchanged: taken, then its replay refused.
	req := func() (int, []byte) {
		r, _ := http.NewRequest("POST", u, strings.NewReader(string(b)))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Signature", sig)
		resp, err := h.RoundTrip(r)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, out
	}
	if st, out := req(); st != http.StatusOK {
		t.Fatalf("the last signature, over the unchanged request: %d %s", st, out)
	}
	if st, out := req(); st != http.StatusForbidden {
		t.Errorf("its replay: %d %s, want 403", st, out)
	}
}

// held: hostile Signature headers at the signed sign-in routes (huge,
// malformed, base64 of the wrong length, a signature dated 1601, 9999 or
// the farthest file time) are refused 400 or 403, never taken, never a
// panic (MOCK.md: "a signature more than 5 minutes from the mock's clock,
// either side ... | 403").
func TestAttack52HostileSignatureHeaders(t *testing.T) {
	h := Must(New(Config{}))
	d := newXALDevice(t, h, time.Now)
	dt, _ := d.deviceToken(t, h)
	title := map[string]any{"RelyingParty": "http://auth.xboxlive.com", "TokenType": "JWT",
		"Properties": map[string]any{"AuthMethod": "ProofOfPossession", "DeviceToken": dt, "TitleId": "1016898439"}}
	signAt := func(at time.Time) string {
		var s string
		b, _ := json.Marshal(title)
		r, _ := http.NewRequest("POST", "https://title.auth.xboxlive.com/title/authenticate", strings.NewReader(string(b)))
		if err := xblsign.Sign(r, d.key, at, xblsign.DefaultPolicy()); err != nil {
			t.Fatal(err)
		}
		s = r.Header.Get("Signature")
		return s
	}
	raw := make([]byte, 76)
	raw[3] = 1
	for i := 4; i < 12; i++ {
		raw[i] = 0xff
	}
	headers := map[string]string{
		"huge":        strings.Repeat("A", 1<<20),
		"malformed":   "%%%not base64%%%",
		"short":       base64.StdEncoding.EncodeToString(raw[:75]),
		"long":        base64.StdEncoding.EncodeToString(append(raw, 0)),
		"max time":    base64.StdEncoding.EncodeToString(raw),
		"raw url b64": base64.RawURLEncoding.EncodeToString(raw),
		"1601":        signAt(time.Date(1601, 1, 1, 0, 0, 1, 0, time.UTC)),
		"9999":        signAt(time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)),
		"six minutes": signAt(time.Now().Add(6 * time.Minute)),
		"many values": "a, b, c",
	}
	for name, sig := range headers {
		st, out, _ := signedPost(t, h, nil, time.Time{}, "https://title.auth.xboxlive.com/title/authenticate", title, func(r *http.Request) {
			r.Header.Set("Signature", sig)
		})
		if st != http.StatusForbidden && st != http.StatusBadRequest {
			t.Errorf("Signature %s: %d %.200s, want 400 or 403", name, st, out)
		}
	}
}

func attack52Partner() tlsca.Partner { return tlsca.Partner{} }

// BREAK. RELIABILITY.md: "Every read of untrusted size is bounded: ...
// mock request bodies 1 MiB (413 beyond)", and of login.live.com's forms
// ("an 8 MiB form posted to login.live.com/oauth20_remoteconnect.srf |
// ... | read to 64 KiB, as every other login.live.com form; 220 KB
// allocated, 400"). A sign-in form of 8 MiB (a valid form in its first
// 64 KiB, padding after) is not refused: readForm parses the first 64 KiB
// as if it were the whole body and answers 200 with a device code, at the
// identity platform's devicecode and at login.live.com's oauth20_connect.srf.
// Memory stays bounded; the body is silently cut, not refused.
func TestAttack52OversizedSignInFormTaken(t *testing.T) {
	h := Must(New(Config{}))
	pad := "&pad=" + strings.Repeat("A", 8<<20)
	for _, c := range []struct{ url, form string }{
		{"https://login.microsoftonline.com/consumers/oauth2/v2.0/devicecode", "client_id=c&scope=XboxLive.signin+offline_access"},
		{"https://login.live.com/oauth20_connect.srf", "client_id=000000004C12AE6F&response_type=device_code&scope=service%3A%3Auser.auth.xboxlive.com%3A%3AMBI_SSL"},
	} {
		st, b := post(t, h, c.url, "application/x-www-form-urlencoded", c.form+pad)
		if st/100 == 2 {
			t.Errorf("%s: an 8 MiB form answered %d (%.120s), want 413 (or 400)", c.url, st, b)
		}
	}
}
