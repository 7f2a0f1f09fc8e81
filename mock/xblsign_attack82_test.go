package mock

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"io"
	"math/big"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/xblsign"
	"github.com/xblgo/fgrl/mock/tlsca"
)

const attack82Me = "2533274791234567"
const attack82Profile = "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag"
const attack82Sessions = "https://sessiondirectory.xboxlive.com/serviceconfigs/7492baca-c1b4-440d-a391-b7ef12345678/sessiontemplates/t/sessions/"

// attack82Delegated signs a backend in (XSAS, XSTS with a user's delegation
// token) and returns the Authorization of its delegated X-token, bound to
// r.key.
func attack82Delegated(t *testing.T, r *s2sRig) string {
	t.Helper()
	status, a := r.xsts(r.sToken(), "http://xboxlive.com", "RETAIL", r.delegationToken(attack82Me, "RETAIL"), r.key)
	if status != 200 || len(a.DisplayClaims.Xui) == 0 {
		t.Fatalf("XSTS: %d %+v", status, a)
	}
	return "XBL3.0 x=" + a.DisplayClaims.Xui[0]["uhs"] + ";" + a.Token
}

// held: s2sauth.go (boundIdentity): "403 (a request not signed with the
// token's proof key, signed outside the skew window or presented before
// ...)"; xblsign: the signature covers method, path and query, the
// Authorization and the body. A signed call to a service, changed after
// signing in its method, its path (an empty segment the mock's routing
// drops, a percent-encoded character), its query, its Authorization (the
// same key's other X-token), is refused 403; so are another key's
// signature, one from beyond the skew ahead, the twin (r, n-s) of one
// taken, and a 1 MiB Signature header; and no answer quotes the token or
// the Signature.
func TestAttack82MockServiceCallSignatureCovers(t *testing.T) {
	r := newS2SRig(t, tlsca.Partner{})
	auth := attack82Delegated(t, r)
	_, svc := r.xsts(r.sToken(), "http://xboxlive.com", "RETAIL", "", r.key)
	svcAuth := "XBL3.0 x=-;" + svc.Token
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	token := auth[strings.IndexByte(auth, ';')+1:]
	check := func(name string, s sent, want int) string {
		t.Helper()
		var sig string
		inner := s.tamper
		s.tamper = func(req *http.Request) {
			if inner != nil {
				inner(req)
			}
			sig = req.Header.Get("Signature")
		}
		resp, b, err := r.do(s)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if resp.StatusCode != want {
			t.Errorf("%s: %d %s, want %d", name, resp.StatusCode, b, want)
		}
		if strings.Contains(string(b), token) || (len(sig) > 20 && strings.Contains(string(b), sig[:20])) {
			t.Errorf("%s: the answer quotes the token or the Signature: %s", name, b)
		}
		return sig
	}
	base := sent{method: "GET", url: attack82Profile, auth: auth, key: r.key}
	with := func(f func(*sent)) sent { s := base; f(&s); return s }
	check("method changed", with(func(s *sent) { s.tamper = func(q *http.Request) { q.Method = "POST" } }), 403)
	check("an empty path segment added", with(func(s *sent) {
		s.tamper = func(q *http.Request) { q.URL.Path = "/users/me//profile/settings" }
	}), 403)
	check("a path character percent-encoded", with(func(s *sent) {
		s.tamper = func(q *http.Request) { q.URL.RawPath = "/users/m%65/profile/settings" }
	}), 403)
	check("a query parameter added", with(func(s *sent) { s.tamper = func(q *http.Request) { q.URL.RawQuery += "&x=1" } }), 403)
	check("Authorization: the same key's service-auth token", with(func(s *sent) {
		s.url = attack82Sessions + "a"
		s.tamper = func(q *http.Request) { q.Header.Set("Authorization", svcAuth) }
	}), 403)
	check("another key's signature", with(func(s *sent) { s.key = other }), 403)
	check("signed beyond the skew ahead", with(func(s *sent) { s.at = r.now.Add(signatureSkew + time.Second) }), 403)
	check("a 1 MiB Signature", with(func(s *sent) {
		s.tamper = func(q *http.Request) { q.Header.Set("Signature", strings.Repeat("A", 1<<20)) }
	}), 403)
	sig := check("the signed call", base, 200)
	h, err := xblsign.ParseHeader(sig)
	if err != nil {
		t.Fatal(err)
	}
	n := elliptic.P256().Params().N
	s := new(big.Int).SetBytes(h.S[:])
	new(big.Int).Sub(n, s).FillBytes(h.S[:])
	check("the twin of a signature taken", with(func(s *sent) {
		s.key, s.tamper = nil, func(q *http.Request) { q.Header.Set("Signature", h.String()) }
	}), 403)
}

// held: xblsign.DefaultPolicy: "the first 8192 bytes of the body", the
// policy the mock checks a service call under (s2sauth.go): a change to
// the body's last signed byte is refused 403; a change past the signed
// bytes is not a signature's failure (documented: those bytes are not
// signed), and the service reads the whole body.
func TestAttack82MockServiceCallBodyPastTheSignedLimit(t *testing.T) {
	r := newS2SRig(t, tlsca.Partner{})
	auth := attack82Delegated(t, r)
	pad := strings.Repeat("a", 9000)
	body := `{"properties":{"custom":{"pad":"` + pad + `"}}}`
	at := func(i int) string {
		b := []byte(body)
		b[i] = 'b'
		return string(b)
	}
	i0 := strings.Index(body, pad)
	for _, tc := range []struct {
		name    string
		session string
		changed string
		refused bool
	}{
		{"unchanged", "u", body, false},
		{"the last signed byte changed", "v", at(8191), true},
		{"a byte past the signed 8192 changed", "w", at(i0 + 8500), false},
	} {
		s := sent{method: "PUT", url: attack82Sessions + tc.session, auth: auth, body: body, key: r.key,
			tamper: func(q *http.Request) { q.Body = io.NopCloser(strings.NewReader(tc.changed)) }}
		resp, b, err := r.do(s)
		if err != nil {
			t.Fatal(err)
		}
		sigRefused := resp.StatusCode == 403 && strings.Contains(string(b), "xblsign")
		if sigRefused != tc.refused || (!tc.refused && resp.StatusCode/100 != 2) {
			t.Errorf("%s: %d %s, signature refused want %t", tc.name, resp.StatusCode, b, tc.refused)
		}
	}
}

// held: replays.go: "a signature is good once ... a signature presented
// again while Verify would still take it is always a replay" — also when
// the copies arrive at once: sixteen goroutines present one signed
// sisu/authenticate, and one signed service call, concurrently; exactly one
// of each is taken.
func TestAttack82MockConcurrentReplay(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	h := Must(New(Config{Now: func() time.Time { return t0 }}))
	d := newXALDevice(t, h, func() time.Time { return t0 })
	dt, _ := d.deviceToken(t, h)
	body := mustJSON(d.sisuAuthenticateRequest(dt, testVerifier))
	req, _ := http.NewRequest(http.MethodPost, "https://sisu.xboxlive.com/authenticate", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if err := xblsign.Sign(req, d.key, t0, xblsign.DefaultPolicy()); err != nil {
		t.Fatal(err)
	}
	sig := req.Header.Get("Signature")
	present := func(n int, mk func() *http.Request, rt func(*http.Request) (*http.Response, error)) map[int]int {
		var mu sync.Mutex
		got := map[int]int{}
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				q := mk()
				<-start
				resp, err := rt(q)
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				mu.Lock()
				got[resp.StatusCode]++
				mu.Unlock()
			}()
		}
		close(start)
		wg.Wait()
		return got
	}
	got := present(16, func() *http.Request {
		q, _ := http.NewRequest(http.MethodPost, "https://sisu.xboxlive.com/authenticate", strings.NewReader(body))
		q.Header.Set("Content-Type", "application/json")
		q.Header.Set("Signature", sig)
		return q
	}, h.RoundTrip)
	if got[200] != 1 || got[403] != 15 {
		t.Errorf("one sisu/authenticate signature presented 16 times at once: %v, want one 200 and fifteen 403", got)
	}

	r := newS2SRig(t, tlsca.Partner{})
	auth := attack82Delegated(t, r)
	sreq, _ := http.NewRequest("GET", attack82Profile, nil)
	sreq.Header.Set("Authorization", auth)
	if err := xblsign.Sign(sreq, r.key, r.now, xblsign.DefaultPolicy()); err != nil {
		t.Fatal(err)
	}
	ssig := sreq.Header.Get("Signature")
	got = present(16, func() *http.Request {
		q, _ := http.NewRequest("GET", attack82Profile, nil)
		q.Header.Set("Authorization", auth)
		q.Header.Set("Signature", ssig)
		return q
	}, r.h.RoundTrip)
	if got[200] != 1 || got[403] != 15 {
		t.Errorf("one service call's signature presented 16 times at once: %v, want one 200 and fifteen 403", got)
	}
}

// held: device.go (verified): "403 for one whose signature does not
// match"; xblsign: the path and query as sent and the Authorization are
// signed. A sisu/authenticate signed without Authorization and sent with
// one, or sent to "//authenticate" (which the mock's routing serves as
// /authenticate) or "/authenticate?" is refused 403.
func TestAttack82MockSignInSignatureCoversAuthorizationAndPath(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	h := Must(New(Config{Now: func() time.Time { return t0 }}))
	d := newXALDevice(t, h, func() time.Time { return t0 })
	dt, _ := d.deviceToken(t, h)
	auth := d.sisuAuthenticateRequest(dt, testVerifier)
	const at = "https://sisu.xboxlive.com/authenticate"
	for _, tc := range []struct {
		name, sentTo string
		edit         func(*http.Request)
	}{
		{"Authorization added", at, func(q *http.Request) { q.Header.Set("Authorization", "XBL3.0 x=1;t") }},
		{"an empty path segment", "https://sisu.xboxlive.com//authenticate", nil},
		{"an empty query", at + "?", nil},
	} {
		q, _ := http.NewRequest(http.MethodPost, at, strings.NewReader(mustJSON(auth)))
		if err := xblsign.Sign(q, d.key, t0, xblsign.DefaultPolicy()); err != nil {
			t.Fatal(err)
		}
		sig := q.Header.Get("Signature")
		status, b, _ := signedPost(t, h, nil, t0, tc.sentTo, auth, func(q *http.Request) {
			q.Header.Set("Signature", sig)
			if tc.edit != nil {
				tc.edit(q)
			}
		})
		if status != 403 {
			t.Errorf("%s: %d %s, want 403", tc.name, status, b)
		}
	}
	// The same request, signed as sent, is taken (the cases above are
	// refused for their signature).
	for _, to := range []string{"https://sisu.xboxlive.com//authenticate", at + "?"} {
		if status, b, _ := signedPost(t, h, d.key, t0, to, auth, nil); status != 200 {
			t.Errorf("%s signed as sent: %d %s, want 200", to, status, b)
		}
	}
}
