package xblsign

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

var attack82Now = time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)

func attack82Key(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// attack82ServerReq is a request as a server receives it.
func attack82ServerReq(method, target, auth string, body []byte) *http.Request {
	r := httptest.NewRequest(method, "https://sisu.xboxlive.com"+target, bytes.NewReader(body))
	if auth != "" {
		r.Header.Set("Authorization", auth)
	}
	return r
}

// attack82Sig signs (method, target, auth, body) at when under p and returns the header.
func attack82Sig(t testing.TB, key *ecdsa.PrivateKey, method, target, auth string, body []byte, when time.Time, p Policy) string {
	t.Helper()
	req, _ := http.NewRequest(method, "https://sisu.xboxlive.com"+target, bytes.NewReader(body))
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	if err := Sign(req, key, when, p); err != nil {
		t.Fatal(err)
	}
	return req.Header.Get("Signature")
}

// held: package doc "ECDSA P-256 signature ... over the SHA-256 of
// version \0 filetime \0 METHOD \0 path?query \0 Authorization \0
// body[:MaxBodyBytes] \0": each part covered, a change to any of them
// (path, its case or encoding, query, an added Authorization, the body's
// last signed byte, a byte added or cut within the limit) fails with
// ErrSignature; and the untouched request verifies.
func TestAttack82SignatureCoversEveryPart(t *testing.T) {
	key := attack82Key(t)
	pub := ProofKeyOf(&key.PublicKey)
	p := Policy{Version: 1, SupportedAlgorithms: []string{"ES256"}, MaxBodyBytes: 64}
	body := bytes.Repeat([]byte("b"), 64)
	const target, auth = "/users/xuid(1)/a?x=1&y=2", "XBL3.0 x=1;tok"
	sig := attack82Sig(t, key, "POST", target, auth, body, attack82Now, p)
	flip := func(i int) []byte { b := bytes.Clone(body); b[i] ^= 1; return b }
	cases := []struct {
		name           string
		method, target string
		auth           string
		body           []byte
	}{
		{"path", "POST", "/users/xuid(2)/a?x=1&y=2", auth, body},
		{"path's case", "POST", "/Users/xuid(1)/a?x=1&y=2", auth, body},
		{"path percent-encoded", "POST", "/users/xuid%281%29/a?x=1&y=2", auth, body},
		{"trailing slash", "POST", "/users/xuid(1)/a/?x=1&y=2", auth, body},
		{"query dropped", "POST", "/users/xuid(1)/a", auth, body},
		{"query reordered", "POST", "/users/xuid(1)/a?y=2&x=1", auth, body},
		{"empty query", "POST", "/users/xuid(1)/a?", auth, body},
		{"no Authorization", "POST", target, "", body},
		{"Authorization's token", "POST", target, "XBL3.0 x=1;tok2", body},
		{"body's first byte", "POST", target, auth, flip(0)},
		{"body's last signed byte", "POST", target, auth, flip(63)},
		{"body one byte short", "POST", target, auth, body[:63]},
		{"no body", "POST", target, auth, nil},
		{"method HEAD", "HEAD", target, auth, body},
	}
	for _, tc := range cases {
		r := attack82ServerReq(tc.method, tc.target, tc.auth, tc.body)
		r.Header.Set("Signature", sig)
		if err := Verify(r, pub, attack82Now, p, time.Minute); !errors.Is(err, ErrSignature) {
			t.Errorf("%s changed: Verify = %v, want ErrSignature", tc.name, err)
		}
	}
	// Authorization added where none was signed.
	sig2 := attack82Sig(t, key, "POST", target, "", body, attack82Now, p)
	r := attack82ServerReq("POST", target, "XBL3.0 x=1;tok", body)
	r.Header.Set("Signature", sig2)
	if err := Verify(r, pub, attack82Now, p, time.Minute); !errors.Is(err, ErrSignature) {
		t.Errorf("Authorization added: Verify = %v, want ErrSignature", err)
	}
	// The extra headers of a policy that names them.
	pe := p
	pe.ExtraHeaders = []string{"X-Xbl-Contract-Version", "Content-Type"}
	req, _ := http.NewRequest("POST", "https://sisu.xboxlive.com"+target, bytes.NewReader(body))
	req.Header.Set("Authorization", auth)
	req.Header.Set("X-Xbl-Contract-Version", "2")
	req.Header.Set("Content-Type", "application/json")
	if err := Sign(req, key, attack82Now, pe); err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string]func(http.Header){
		"none":                   func(http.Header) {},
		"contract version":       func(h http.Header) { h.Set("X-Xbl-Contract-Version", "3") },
		"content type removed":   func(h http.Header) { h.Del("Content-Type") },
		"extra values swapped":   func(h http.Header) { h.Set("X-Xbl-Contract-Version", "application/json"); h.Set("Content-Type", "2") },
		"contract version empty": func(h http.Header) { h.Set("X-Xbl-Contract-Version", "") },
	} {
		r := attack82ServerReq("POST", target, auth, body)
		r.Header.Set("X-Xbl-Contract-Version", "2")
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Signature", req.Header.Get("Signature"))
		edit(r.Header)
		err := Verify(r, pub, attack82Now, pe, time.Minute)
		if name == "none" {
			if err != nil {
				t.Errorf("the signed request with extra headers: %v", err)
			}
			continue
		}
		if !errors.Is(err, ErrSignature) {
			t.Errorf("extra header %s: Verify = %v, want ErrSignature", name, err)
		}
	}
	r = attack82ServerReq("POST", target, auth, body)
	r.Header.Set("Signature", sig)
	if err := Verify(r, pub, attack82Now, p, time.Minute); err != nil {
		t.Errorf("the signed request itself: %v", err)
	}
}

// held: Verify "reads at most p.MaxBodyBytes of req.Body (never GetBody)
// and puts them back in front of the rest, so a handler reads the whole
// body after it"; Digest: "its body, of which the first maxBody bytes
// count"; Sign "reads at most p.MaxBodyBytes of the body". A body of 3 MiB
// under a policy of MaxBodyBytes (1 MiB): a change past the limit
// verifies (as documented), a change at the limit's last byte does not,
// the handler reads all 3 MiB after Verify, and neither Sign nor Verify
// reads more than the limit (and one read's worth).
func TestAttack82BodyPastTheSignedLimit(t *testing.T) {
	key := attack82Key(t)
	pub := ProofKeyOf(&key.PublicKey)
	p := Policy{Version: 1, SupportedAlgorithms: []string{"ES256"}, MaxBodyBytes: MaxBodyBytes}
	body := make([]byte, 3*MaxBodyBytes)
	for i := range body {
		body[i] = byte(i * 7)
	}
	// Sign, through a body without GetBody, counted.
	cr := &attack82Counting{r: bytes.NewReader(body)}
	req, _ := http.NewRequest("PUT", "https://sessiondirectory.xboxlive.com/s", cr)
	if err := Sign(req, key, attack82Now, p); err != nil {
		t.Fatal(err)
	}
	if cr.n > int64(MaxBodyBytes)+4096 {
		t.Errorf("Sign read %d bytes of a body, MaxBodyBytes %d", cr.n, MaxBodyBytes)
	}
	if rest, _ := io.ReadAll(req.Body); !bytes.Equal(rest, body) {
		t.Errorf("Sign left a body of %d bytes, not the whole %d", len(rest), len(body))
	}
	sig := req.Header.Get("Signature")
	for name, i := range map[string]int{"first byte past the limit": MaxBodyBytes, "last byte": len(body) - 1} {
		b := bytes.Clone(body)
		b[i] ^= 0xff
		vr := &attack82Counting{r: bytes.NewReader(b)}
		r := httptest.NewRequest("PUT", "https://sessiondirectory.xboxlive.com/s", vr)
		r.Header.Set("Signature", sig)
		if err := Verify(r, pub, attack82Now, p, time.Minute); err != nil {
			t.Errorf("%s changed (not signed, as documented): %v", name, err)
		}
		if vr.n > int64(MaxBodyBytes)+4096 {
			t.Errorf("Verify read %d bytes, MaxBodyBytes %d", vr.n, MaxBodyBytes)
		}
		if got, _ := io.ReadAll(r.Body); !bytes.Equal(got, b) {
			t.Errorf("%s: the handler read %d bytes after Verify, not the whole body", name, len(got))
		}
	}
	b := bytes.Clone(body)
	b[MaxBodyBytes-1] ^= 0xff
	r := httptest.NewRequest("PUT", "https://sessiondirectory.xboxlive.com/s", bytes.NewReader(b))
	r.Header.Set("Signature", sig)
	if err := Verify(r, pub, attack82Now, p, time.Minute); !errors.Is(err, ErrSignature) {
		t.Errorf("the last signed byte changed: %v, want ErrSignature", err)
	}
}

type attack82Counting struct {
	r io.Reader
	n int64
}

func (c *attack82Counting) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// held: Verify: "made within skew of now (either side)"; ErrStale for
// outside. At exactly skew either side the signature is taken; one file
// time tick (100 ns) past it, refused with ErrStale; a negative skew takes
// nothing; a header at the edges of the file time's range is refused,
// never taken through an overflow of the difference.
func TestAttack82SkewEdges(t *testing.T) {
	key := attack82Key(t)
	pub := ProofKeyOf(&key.PublicKey)
	p := DefaultPolicy()
	const skew = 5 * time.Minute
	for _, tc := range []struct {
		name string
		at   time.Time
		ok   bool
	}{
		{"exactly skew ago", attack82Now.Add(-skew), true},
		{"exactly skew ahead", attack82Now.Add(skew), true},
		{"a tick more than skew ago", attack82Now.Add(-skew - 100*time.Nanosecond), false},
		{"a tick more than skew ahead", attack82Now.Add(skew + 100*time.Nanosecond), false},
		{"1601", time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC), false},
		{"year 30000", time.Date(30000, 1, 1, 0, 0, 0, 0, time.UTC), false},
	} {
		sig := attack82Sig(t, key, "GET", "/x", "", nil, tc.at, p)
		r := attack82ServerReq("GET", "/x", "", nil)
		r.Header.Set("Signature", sig)
		err := Verify(r, pub, attack82Now, p, skew)
		if tc.ok && err != nil {
			t.Errorf("%s: %v, want taken", tc.name, err)
		}
		if !tc.ok && !errors.Is(err, ErrStale) {
			t.Errorf("%s: %v, want ErrStale", tc.name, err)
		}
	}
	// A header with the largest file time (and a valid signature shape).
	var raw [headerLen]byte
	raw[3] = 1
	for i := 4; i < 12; i++ {
		raw[i] = 0xff
	}
	r := attack82ServerReq("GET", "/x", "", nil)
	r.Header.Set("Signature", base64.StdEncoding.EncodeToString(raw[:]))
	if err := Verify(r, pub, attack82Now, p, 1<<62); err == nil {
		t.Error("a header of file time 2^64-1 was taken")
	}
	sig := attack82Sig(t, key, "GET", "/x", "", nil, attack82Now, p)
	r = attack82ServerReq("GET", "/x", "", nil)
	r.Header.Set("Signature", sig)
	if err := Verify(r, pub, attack82Now, p, -time.Second); !errors.Is(err, ErrStale) {
		t.Errorf("a negative skew: %v, want ErrStale", err)
	}
}

// held: Verify "checks req's Signature header against the proof key pub":
// the signature of another key is refused (ErrSignature), also when the
// header and request are otherwise perfect; a key naming another
// algorithm or use, or padded/std-alphabet coordinates, is refused (ErrKey).
func TestAttack82AnotherKeyRefused(t *testing.T) {
	key, other := attack82Key(t), attack82Key(t)
	p := DefaultPolicy()
	sig := attack82Sig(t, key, "POST", "/a", "XBL3.0 x=1;t", []byte("{}"), attack82Now, p)
	r := attack82ServerReq("POST", "/a", "XBL3.0 x=1;t", []byte("{}"))
	r.Header.Set("Signature", sig)
	if err := Verify(r, ProofKeyOf(&other.PublicKey), attack82Now, p, time.Minute); !errors.Is(err, ErrSignature) {
		t.Errorf("another key: %v, want ErrSignature", err)
	}
	good := ProofKeyOf(&key.PublicKey)
	xb, _ := base64.RawURLEncoding.DecodeString(good.X)
	yb, _ := base64.RawURLEncoding.DecodeString(good.Y)
	for name, k := range map[string]ProofKey{
		"alg ES384":       {Kty: "EC", Crv: "P-256", Alg: "ES384", Use: "sig", X: good.X, Y: good.Y},
		"use enc":         {Kty: "EC", Crv: "P-256", Alg: "ES256", Use: "enc", X: good.X, Y: good.Y},
		"padded x":        {Kty: "EC", Crv: "P-256", X: base64.URLEncoding.EncodeToString(xb), Y: good.Y},
		"std alphabet":    {Kty: "EC", Crv: "P-256", X: base64.StdEncoding.EncodeToString(xb), Y: base64.StdEncoding.EncodeToString(yb)},
		"x with 33 bytes": {Kty: "EC", Crv: "P-256", X: base64.RawURLEncoding.EncodeToString(append([]byte{0}, xb...)), Y: good.Y},
		"huge x":          {Kty: "EC", Crv: "P-256", X: strings.Repeat("A", 8<<20), Y: good.Y},
		"kty ec":          {Kty: "ec", Crv: "P-256", X: good.X, Y: good.Y},
	} {
		if name == "std alphabet" && k.X == good.X && k.Y == good.Y {
			continue // no character differs between the alphabets for this key
		}
		r := attack82ServerReq("POST", "/a", "XBL3.0 x=1;t", []byte("{}"))
		r.Header.Set("Signature", sig)
		if err := Verify(r, k, attack82Now, p, time.Minute); !errors.Is(err, ErrKey) {
			t.Errorf("%s: %v, want ErrKey", name, err)
		}
	}
}

// held: ParseHeader "is strict: standard base64 of exactly the header's
// 76 bytes"; Verify's "error wraps ErrMissing, ErrMalformed, ErrPolicy,
// ..."; hostile headers (bad base64, short, long, wrong version, huge,
// non-canonical padding bits, whitespace, NULs) never panic, are refused,
// and cost next to nothing whatever their size.
func TestAttack82HostileSignatureHeaders(t *testing.T) {
	key := attack82Key(t)
	pub := ProofKeyOf(&key.PublicKey)
	p := DefaultPolicy()
	good := attack82Sig(t, key, "GET", "/x", "", nil, attack82Now, p)
	raw, _ := base64.StdEncoding.DecodeString(good)
	v0 := bytes.Clone(raw)
	v0[3] = 0
	vmax := bytes.Clone(raw)
	copy(vmax[:4], []byte{0xff, 0xff, 0xff, 0xff})
	// The last character of good carries 4 unused bits (76 bytes = 25*3+1:
	// "xx==" ending): set one to make a non-canonical encoding.
	nc := []byte(good)
	const alpha = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	idx := strings.IndexByte(alpha, nc[len(nc)-3])
	nc[len(nc)-3] = alpha[idx|1]
	huge := strings.Repeat("A", 64<<20)
	cases := map[string]string{
		"empty":             "",
		"spaces":            strings.Repeat(" ", len(good)),
		"short":             good[:len(good)-4],
		"long":              good + "AAAA",
		"one more char":     good + "=",
		"bad base64":        strings.Repeat("*", len(good)),
		"leading space":     " " + good[1:],
		"trailing newline":  good[:len(good)-1] + "\n",
		"NUL inside":        good[:10] + "\x00" + good[11:],
		"url alphabet":      strings.NewReplacer("+", "-", "/", "_").Replace(good),
		"non-canonical pad": string(nc),
		"version 0":         base64.StdEncoding.EncodeToString(v0),
		"version 2^32-1":    base64.StdEncoding.EncodeToString(vmax),
		"huge":              huge,
		"huge of base64":    huge[:len(huge)-2] + "==",
		"all zero":          base64.StdEncoding.EncodeToString(make([]byte, headerLen)),
		"all ones":          base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0xff}, headerLen)),
	}
	if string(nc) == good {
		delete(cases, "non-canonical pad")
	}
	if cases["url alphabet"] == good { // a signature with no + or / (about one in 25): nothing to spell otherwise
		delete(cases, "url alphabet")
	}
	for name, v := range cases {
		func() {
			defer func() {
				if e := recover(); e != nil {
					t.Errorf("%s: panic %v", name, e)
				}
			}()
			r := attack82ServerReq("GET", "/x", "", nil)
			r.Header["Signature"] = []string{v}
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			start := time.Now()
			err := Verify(r, pub, attack82Now, p, time.Minute)
			took := time.Since(start)
			runtime.ReadMemStats(&m1)
			if err == nil {
				t.Errorf("%s: taken", name)
			}
			if !errors.Is(err, ErrMissing) && !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrPolicy) && !errors.Is(err, ErrStale) && !errors.Is(err, ErrSignature) {
				t.Errorf("%s: %v wraps none of the documented errors", name, err)
			}
			if took > 50*time.Millisecond {
				t.Errorf("%s: Verify took %v", name, took)
			}
			if a := m1.TotalAlloc - m0.TotalAlloc; a > 64<<10 {
				t.Errorf("%s: Verify allocated %d bytes", name, a)
			}
		}()
	}
	// Any single-byte change of a good header is refused.
	for i := 0; i < len(good); i++ {
		for _, c := range []byte{'A', 'z', '+', '/', '=', '0'} {
			if good[i] == c {
				continue
			}
			b := []byte(good)
			b[i] = c
			r := attack82ServerReq("GET", "/x", "", nil)
			r.Header.Set("Signature", string(b))
			if err := Verify(r, pub, attack82Now, p, time.Minute); err == nil {
				h1, _ := ParseHeader(string(b))
				h0, _ := ParseHeader(good)
				if h1 != h0 {
					t.Errorf("header with byte %d set to %q taken", i, c)
				}
			}
		}
	}
}

// held: "no private key or token in errors": every error of Verify and
// Sign (each failure kind) holds neither the private key (hex, base64),
// the Authorization's token, the Signature header nor the body.
func TestAttack82NoSecretInErrors(t *testing.T) {
	key, other := attack82Key(t), attack82Key(t)
	pub := ProofKeyOf(&key.PublicKey)
	p := DefaultPolicy()
	const token = "eyJhbGciOiJSU0EtT0FFUCIsImVuYyI6IkEyNTZDQkMtSFM1MTIifQ.SECRET-TOKEN-PAYLOAD-0123456789"
	auth := "XBL3.0 x=1234;" + token
	body := []byte(`{"AccessToken":"t=LIVE-SECRET-ACCESS-TOKEN-42"}`)
	sig := attack82Sig(t, key, "POST", "/a", auth, body, attack82Now, p)
	d, err := key.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	secrets := []string{token, "LIVE-SECRET-ACCESS-TOKEN-42", sig, sig[12:40], hex.EncodeToString(d), base64.StdEncoding.EncodeToString(d),
		base64.RawURLEncoding.EncodeToString(d), new(big.Int).SetBytes(d).String()}
	var errs []error
	for _, tc := range []struct {
		sig string
		k   ProofKey
		now time.Time
		p   Policy
	}{
		{sig, ProofKeyOf(&other.PublicKey), attack82Now, p},
		{sig, pub, attack82Now.Add(time.Hour), p},
		{"", pub, attack82Now, p},
		{sig[:70], pub, attack82Now, p},
		{"AAAAAg" + sig[6:], pub, attack82Now, p},
		{sig, ProofKey{Kty: "EC", Crv: "P-256", X: pub.X, Y: pub.X}, attack82Now, p},
		{sig, pub, attack82Now, Policy{Version: 1, SupportedAlgorithms: []string{"RS256"}}},
	} {
		r := attack82ServerReq("POST", "/a", auth, body)
		r.Header.Set("Signature", tc.sig)
		errs = append(errs, Verify(r, tc.k, tc.now, tc.p, time.Minute))
	}
	r := attack82ServerReq("POST", "/a", auth, nil)
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body[:5]), attack82ErrReader{}))
	r.Header.Set("Signature", sig)
	errs = append(errs, Verify(r, pub, attack82Now, p, time.Minute))
	k384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	sr, _ := http.NewRequest("POST", "https://sisu.xboxlive.com/a", bytes.NewReader(body))
	sr.Header.Set("Authorization", auth)
	errs = append(errs, Sign(sr, k384, attack82Now, p), Sign(sr, key, attack82Now, Policy{Version: 0, SupportedAlgorithms: []string{"ES256"}}))
	for i, err := range errs {
		if err == nil {
			t.Errorf("case %d: no error", i)
			continue
		}
		msg := err.Error() + fmt.Sprintf(" %+v %#v", err, err)
		for _, s := range secrets {
			if strings.Contains(msg, s) {
				t.Errorf("case %d: error %q holds a secret (%.12s...)", i, err, s)
			}
		}
	}
}

type attack82ErrReader struct{}

var errAttack82Reset = errors.New("connection reset")

func (attack82ErrReader) Read([]byte) (int, error) { return 0, errAttack82Reset }

// held: concurrency: Sign and Verify share nothing but their arguments:
// many goroutines signing and verifying with one key, one policy (its
// ExtraHeaders slice shared) and one ProofKey, under -race, all verify
// their own requests and refuse each other's.
func TestAttack82ConcurrentSignVerify(t *testing.T) {
	key := attack82Key(t)
	pub := ProofKeyOf(&key.PublicKey)
	p := Policy{Version: 1, SupportedAlgorithms: []string{"ES256"}, MaxBodyBytes: 8192, ExtraHeaders: []string{"X-A"}}
	var wg sync.WaitGroup
	sigs := make([]string, 32)
	for g := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				body := []byte(fmt.Sprintf(`{"g":%d,"i":%d}`, g, i))
				req, _ := http.NewRequest("POST", "https://x.xboxlive.com/g", bytes.NewReader(body))
				req.Header.Set("X-A", fmt.Sprint(g))
				if err := Sign(req, key, attack82Now, p); err != nil {
					t.Error(err)
					return
				}
				r := attack82ServerReq("POST", "/g", "", body)
				r.Header.Set("X-A", fmt.Sprint(g))
				r.Header.Set("Signature", req.Header.Get("Signature"))
				if err := Verify(r, pub, attack82Now, p, time.Minute); err != nil {
					t.Errorf("goroutine %d: %v", g, err)
				}
				sigs[g] = req.Header.Get("Signature")
			}
		}()
	}
	wg.Wait()
	// The last signature of goroutine 0 over goroutine 1's request: refused.
	r := attack82ServerReq("POST", "/g", "", []byte(`{"g":1,"i":19}`))
	r.Header.Set("X-A", "1")
	r.Header.Set("Signature", sigs[0])
	if err := Verify(r, pub, attack82Now, p, time.Minute); !errors.Is(err, ErrSignature) {
		t.Errorf("one goroutine's signature over another's request: %v", err)
	}
}

// BREAK: FileTime: "FileTime returns t as a Windows file time; instants
// before 1601 are 0." t.Unix()*1e7 overflows int64 for instants before
// about year -27000: the product wraps to a positive number and FileTime
// returns a file time far in the future instead of 0, so Sign at such an
// instant writes a header that claims another time.
func TestAttack82FileTimeFarPastIsZero(t *testing.T) {
	for _, y := range []int{1600, 1, -1000, -27627, -30000, -200000} {
		tm := time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC)
		if got := FileTime(tm); got != 0 {
			t.Errorf("FileTime(%v) = %d (%v), want 0 (before 1601)", tm, got, timeOf(got))
		}
	}
}

// BREAK: FileTime: "FileTime returns t as a Windows file time". A file
// time is an unsigned 64-bit count of 100 ns since 1601 (up to about year
// 60056); FileTime computes it in int64 and, past about year 30828,
// returns 0 or a wrapped value instead of t's file time.
func TestAttack82FileTimeFarFuture(t *testing.T) {
	for _, y := range []int{30000, 30828, 31000, 40000, 58000} {
		tm := time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC)
		want := new(big.Int).Mul(big.NewInt(tm.Unix()), big.NewInt(1e7))
		want.Add(want, big.NewInt(fileTimeEpoch))
		got := FileTime(tm)
		if !want.IsUint64() {
			continue
		}
		if got != want.Uint64() {
			t.Errorf("FileTime(%v) = %d, want %s", tm, got, want)
		}
	}
}

// attack82VerifyServer is a loopback server that verifies each request's
// signature against pub under p and answers 204 or 403 with the error.
func attack82VerifyServer(t *testing.T, pub ProofKey, p Policy) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := Verify(r, pub, time.Now(), p, time.Minute); err != nil {
			http.Error(w, err.Error(), http.StatusForbidden)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// BREAK: package doc: "The package is used by both sides of the wire, the
// SDK's signed sign-in and the mock that checks it, so that the two cannot
// disagree"; Sign "sets req's Signature header: key's signature of req";
// Digest: "method (upper case, as sent)". net/http: "For client requests,
// an empty string means GET", and its transport sends "GET". Sign signs the
// empty method as "", so a request net/http sends as a GET (a hand-built
// http.Request with no Method) fails Verify at the server that receives it.
func TestAttack82SignEmptyMethodOverTheWire(t *testing.T) {
	key := attack82Key(t)
	srv := attack82VerifyServer(t, ProofKeyOf(&key.PublicKey), DefaultPolicy())
	req, _ := http.NewRequest("GET", srv.URL+"/titles/default/endpoints?type=1", nil)
	req.Method = "" // net/http: an empty string means GET
	req.Header.Set("Authorization", "XBL3.0 x=1;tok")
	if err := Sign(req, key, time.Now(), DefaultPolicy()); err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Errorf("a GET request with Method \"\", signed by Sign, sent by net/http: server's Verify says %d %s", resp.StatusCode, strings.TrimSpace(string(b)))
	}
}

// BREAK: package doc: "so that the two cannot disagree"; Digest: "its
// Authorization header" (as sent). net/http's client writes a header value
// trimmed of leading and trailing spaces and tabs (and its server reads
// them trimmed); Sign signs the value untrimmed, so a request whose
// Authorization (or an extra header the policy covers) ends with a space
// fails Verify at the server that receives it.
func TestAttack82SignHeaderWhitespaceOverTheWire(t *testing.T) {
	key := attack82Key(t)
	p := DefaultPolicy()
	pe := p
	pe.ExtraHeaders = []string{"X-Xbl-Contract-Version"}
	for _, tc := range []struct {
		name   string
		p      Policy
		header string
		value  string
	}{
		{"Authorization with a trailing space", p, "Authorization", "XBL3.0 x=1;tok "},
		{"Authorization with a leading tab", p, "Authorization", "\tXBL3.0 x=1;tok"},
		{"extra header with a trailing space", pe, "X-Xbl-Contract-Version", "2 "},
	} {
		srv := attack82VerifyServer(t, ProofKeyOf(&key.PublicKey), tc.p)
		req, _ := http.NewRequest("POST", srv.URL+"/users/me/x", strings.NewReader(`{"a":1}`))
		req.Header.Set(tc.header, tc.value)
		if err := Sign(req, key, time.Now(), tc.p); err != nil {
			t.Fatal(err)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent {
			t.Errorf("%s (%q), signed by Sign, sent by net/http: server's Verify says %d %s", tc.name, tc.value, resp.StatusCode, strings.TrimSpace(string(b)))
		}
	}
}

// held: Verify, restated after this test (it was
// TestAttack82VerifyBodyErrorWrapsADocumentedError: the godoc named six errors,
// and a body whose read failed gave its read's error): "Its error wraps
// ErrMissing, ErrMalformed, ErrPolicy, ErrStale, ErrKey or ErrSignature,
// or, when reading the body failed (a client gone mid-body), that read's
// error." A body that fails mid-read: Verify's error wraps that error.
func TestAttack82VerifyBodyErrorWrapsADocumentedError(t *testing.T) {
	key := attack82Key(t)
	pub := ProofKeyOf(&key.PublicKey)
	p := DefaultPolicy()
	sig := attack82Sig(t, key, "POST", "/a", "", []byte(`{"a":1}`), attack82Now, p)
	r := attack82ServerReq("POST", "/a", "", nil)
	r.Body = io.NopCloser(io.MultiReader(strings.NewReader(`{"a"`), attack82ErrReader{}))
	r.Header.Set("Signature", sig)
	if err := Verify(r, pub, attack82Now, p, time.Minute); !errors.Is(err, errAttack82Reset) {
		t.Errorf("Verify = %v; want the body's read error", err)
	}
}
