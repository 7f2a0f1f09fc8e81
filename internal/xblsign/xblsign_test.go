package xblsign

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The vectors of OpenXbox/xbox-webapi-python's tests
// (tests/test_request_signer.py, tests/conftest.py and
// tests/data/test_signing_key.pem): its test key, the instant it signs at,
// the request, and the digest, proof key and signature it recorded.
const (
	pythonKeyPEM = `-----BEGIN EC PRIVATE KEY-----
MHcCAQEEIObr5IVtB+DQcn25+R9n4K/EyUUSbVvxIJY7WhVeELUuoAoGCCqGSM49AwEHoUQDQgAE
OKyCQ9qH5U4lZcS0c5/LxIyKvOpKe0l3x4Eg5OgDbzezKNLRgT28fd4Fq3rU/1OQKmx6jSq0vTB5
Ao/48m0iGg==
-----END EC PRIVATE KEY-----`
	pythonUnix      = 1586999965
	pythonAuth      = "XBL3.0 x=userid;jsonwebtoken"
	pythonBody      = "thebodygoeshere"
	pythonTarget    = "/path?query=1"
	pythonConcat    = "000000010001d6138d10f7cc8000504f5354002f706174683f71756572793d310058424c332e3020783d7573657269643b6a736f6e776562746f6b656e00746865626f6479676f65736865726500"
	pythonDigest    = "f7d61b6f8d4dcd86da1aa8553f0ee7c15450811e7cd2759364e22f67d853ff50"
	pythonSignature = "AAAAAQHWE40Q98yAFe3R7GuZfvGA350cH7hWgg4HIHjaD9lGYiwxki6bNyGnB8dMEIfEmBiuNuGUfWjY5lL2h44X/VMGOkPIezVb7Q=="
)

var pythonTime = time.Unix(pythonUnix, 0).UTC()

func pythonKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	blk, _ := pem.Decode([]byte(pythonKeyPEM))
	k, err := x509.ParseECPrivateKey(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// pythonRequest is the recorded request as a server receives it.
func pythonRequest(sig string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "https://device.auth.xboxlive.com"+pythonTarget, strings.NewReader(pythonBody))
	r.Header.Set("Authorization", pythonAuth)
	r.Header.Set("Signature", sig)
	return r
}

func TestProofKeyOfRecordedKey(t *testing.T) {
	want := ProofKey{Kty: "EC", Crv: "P-256", Alg: "ES256", Use: "sig",
		X: "OKyCQ9qH5U4lZcS0c5_LxIyKvOpKe0l3x4Eg5OgDbzc", Y: "syjS0YE9vH3eBat61P9TkCpseo0qtL0weQKP-PJtIho"}
	if diff := cmp.Diff(want, ProofKeyOf(&pythonKey(t).PublicKey)); diff != "" {
		t.Errorf("ProofKeyOf mismatch (-want +got):\n%s", diff)
	}
}

func TestDigestMatchesRecordedVector(t *testing.T) {
	concat, _ := hex.DecodeString(pythonConcat)
	if sum := sha256.Sum256(concat); hex.EncodeToString(sum[:]) != pythonDigest {
		t.Fatalf("the recorded bytes do not hash to the recorded digest")
	}
	got := Digest(1, FileTime(pythonTime), "POST", pythonTarget, pythonAuth, nil, []byte(pythonBody), 8192)
	if hex.EncodeToString(got[:]) != pythonDigest {
		t.Errorf("Digest = %x, want %s", got, pythonDigest)
	}
}

func TestFileTime(t *testing.T) {
	// 0x01d6138d10f7cc80 is the recorded concatenation's file time.
	if got, want := FileTime(pythonTime), uint64(0x01d6138d10f7cc80); got != want {
		t.Errorf("FileTime(%v) = %#x, want %#x", pythonTime, got, want)
	}
	at := time.Date(2026, 12, 3, 12, 0, 0, 123456700, time.UTC)
	if got := timeOf(FileTime(at)); !got.Equal(at) {
		t.Errorf("timeOf(FileTime(%v)) = %v", at, got)
	}
	if got := FileTime(time.Date(1500, 1, 1, 0, 0, 0, 0, time.UTC)); got != 0 {
		t.Errorf("FileTime before 1601 = %d, want 0", got)
	}
}

func TestVerifyRecordedSignature(t *testing.T) {
	pk := ProofKeyOf(&pythonKey(t).PublicKey)
	r := pythonRequest(pythonSignature)
	if err := Verify(r, pk, pythonTime, DefaultPolicy(), time.Minute); err != nil {
		t.Fatalf("Verify(recorded) = %v, want nil", err)
	}
	if b, _ := io.ReadAll(r.Body); string(b) != pythonBody {
		t.Errorf("body after Verify = %q, want %q", b, pythonBody)
	}
}

// TestVerifyRefuses: every change to a signed request, a stale or future
// signature, another key and a malformed header are refused, each with its
// error.
func TestVerifyRefuses(t *testing.T) {
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	good := ProofKeyOf(&pythonKey(t).PublicKey)
	flipped := []byte(pythonSignature)
	flipped[40] ^= 'A' ^ 'B'
	v2 := "AAAAAg" + pythonSignature[6:]
	tests := []struct {
		name  string
		edit  func(r *http.Request)
		key   ProofKey
		now   time.Time
		want  error
		pol   Policy
		nobdy bool
	}{
		{name: "method", edit: func(r *http.Request) { r.Method = "PUT" }, want: ErrSignature},
		{name: "path", edit: func(r *http.Request) { r.RequestURI = "/path?query=2" }, want: ErrSignature},
		{name: "authorization", edit: func(r *http.Request) { r.Header.Set("Authorization", "XBL3.0 x=other;jsonwebtoken") }, want: ErrSignature},
		{name: "no authorization", edit: func(r *http.Request) { r.Header.Del("Authorization") }, want: ErrSignature},
		{name: "body", edit: func(r *http.Request) { r.Body = io.NopCloser(strings.NewReader("thebodygoesthere")) }, want: ErrSignature},
		{name: "body other than GetBody's", edit: func(r *http.Request) {
			r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(pythonBody)), nil }
			r.Body = io.NopCloser(strings.NewReader("thebodygoesthere"))
		}, want: ErrSignature},
		{name: "signature bits", edit: func(r *http.Request) { r.Header.Set("Signature", string(flipped)) }, want: ErrSignature},
		{name: "other key", key: ProofKeyOf(&other.PublicKey), want: ErrSignature},
		{name: "stale", now: pythonTime.Add(5*time.Minute + time.Second), want: ErrStale},
		{name: "from the future", now: pythonTime.Add(-5*time.Minute - time.Second), want: ErrStale},
		{name: "version 2", edit: func(r *http.Request) { r.Header.Set("Signature", v2) }, want: ErrPolicy},
		{name: "missing", edit: func(r *http.Request) { r.Header.Del("Signature") }, want: ErrMissing},
		{name: "truncated", edit: func(r *http.Request) { r.Header.Set("Signature", pythonSignature[:60]) }, want: ErrMalformed},
		{name: "url alphabet", edit: func(r *http.Request) { r.Header.Set("Signature", strings.ReplaceAll(pythonSignature, "/", "_")) }, want: ErrMalformed},
		{name: "no padding", edit: func(r *http.Request) { r.Header.Set("Signature", strings.TrimRight(pythonSignature, "=")) }, want: ErrMalformed},
		{name: "key not on the curve", key: ProofKey{Kty: "EC", Crv: "P-256", X: good.X, Y: good.X}, want: ErrKey},
		{name: "key of another curve", key: ProofKey{Kty: "EC", Crv: "P-384", X: good.X, Y: good.Y}, want: ErrKey},
		{name: "RSA key", key: ProofKey{Kty: "RSA", X: good.X, Y: good.Y}, want: ErrKey},
		{name: "policy without ES256", pol: Policy{Version: 1, SupportedAlgorithms: []string{"RS256"}}, want: ErrPolicy},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := pythonRequest(pythonSignature)
			if tc.edit != nil {
				tc.edit(r)
			}
			key, now, pol := good, pythonTime, DefaultPolicy()
			if tc.key != (ProofKey{}) {
				key = tc.key
			}
			if !tc.now.IsZero() {
				now = tc.now
			}
			if tc.pol.Version != 0 {
				pol = tc.pol
			}
			if err := Verify(r, key, now, pol, 5*time.Minute); !errors.Is(err, tc.want) {
				t.Errorf("Verify = %v, want %v", err, tc.want)
			}
		})
	}
}

// countingReader is an endless body that counts what is read of it.
type countingReader struct{ n int64 }

func (c *countingReader) Read(p []byte) (int, error) {
	clear(p)
	c.n += int64(len(p))
	return len(p), nil
}

// TestVerifyReadsAtMostMaxBodyBytes: a body of any size costs Verify the
// policy's MaxBodyBytes, and the bytes past it are not signed, as the
// public signer hashes body[:max_body_bytes].
func TestVerifyReadsAtMostMaxBodyBytes(t *testing.T) {
	key := pythonKey(t)
	p := DefaultPolicy()
	body := bytes.Repeat([]byte{'a'}, p.MaxBodyBytes)
	req, _ := http.NewRequest(http.MethodPost, "https://sisu.xboxlive.com/authorize", bytes.NewReader(body))
	if err := Sign(req, key, pythonTime, p); err != nil {
		t.Fatal(err)
	}
	c := &countingReader{}
	srv := httptest.NewRequest(http.MethodPost, "https://sisu.xboxlive.com/authorize", io.MultiReader(bytes.NewReader(body), c))
	srv.Header.Set("Signature", req.Header.Get("Signature"))
	if err := Verify(srv, ProofKeyOf(&key.PublicKey), pythonTime, p, time.Minute); err != nil {
		t.Fatalf("Verify = %v, want nil (bytes past MaxBodyBytes are not signed)", err)
	}
	if c.n > 512 { // what one read past the limit may take
		t.Errorf("Verify read %d bytes past MaxBodyBytes", c.n)
	}
	if err := Sign(req, key, pythonTime, Policy{Version: 1, SupportedAlgorithms: []string{"ES256"}, MaxBodyBytes: MaxBodyBytes + 1}); !errors.Is(err, ErrPolicy) {
		t.Errorf("Sign with MaxBodyBytes over the bound = %v, want ErrPolicy", err)
	}
}

// TestSignVerifyRoundTrip: what Sign signs, Verify accepts on the server
// side, for bodies with and without GetBody, and the body reaches the
// server whole.
func TestSignVerifyRoundTrip(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tests := []struct {
		name   string
		body   io.Reader
		wantIn string
	}{
		{name: "no body", body: nil},
		{name: "with GetBody", body: strings.NewReader(`{"a":1}`), wantIn: `{"a":1}`},
		{name: "without GetBody", body: io.MultiReader(strings.NewReader(`{"b":2}`)), wantIn: `{"b":2}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got string
			var verr error
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				verr = Verify(r, ProofKeyOf(&key.PublicKey), time.Now(), DefaultPolicy(), time.Minute)
				b, _ := io.ReadAll(r.Body)
				got = string(b)
			}))
			defer srv.Close()
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/device/authenticate?x=1%202", tc.body)
			req.Header.Set("Authorization", "XBL3.0 x=1;t")
			if err := Sign(req, key, time.Now(), DefaultPolicy()); err != nil {
				t.Fatal(err)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if verr != nil {
				t.Errorf("Verify = %v, want nil", verr)
			}
			if got != tc.wantIn {
				t.Errorf("server read %q, want %q", got, tc.wantIn)
			}
		})
	}
}

func TestSignRefusesAKeyOfAnotherCurve(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	req, _ := http.NewRequest(http.MethodGet, "https://title.mgt.xboxlive.com/titles/default/endpoints", nil)
	if err := Sign(req, key, time.Now(), DefaultPolicy()); !errors.Is(err, ErrKey) {
		t.Errorf("Sign(P-384) = %v, want ErrKey", err)
	}
	if err := Sign(req, nil, time.Now(), DefaultPolicy()); !errors.Is(err, ErrKey) {
		t.Errorf("Sign(nil) = %v, want ErrKey", err)
	}
}

func FuzzParseHeader(f *testing.F) {
	f.Add(pythonSignature)
	f.Add("")
	f.Add(strings.Repeat("A", 104))
	f.Fuzz(func(t *testing.T, v string) {
		h, err := ParseHeader(v)
		if err != nil {
			return
		}
		// The file time keeps 100 ns; what was accepted is what is written.
		if got := h.String(); got != v {
			t.Errorf("ParseHeader(%q).String() = %q", v, got)
		}
	})
}

func FuzzProofKey(f *testing.F) {
	k := ProofKeyOf(&pythonKey(f).PublicKey)
	f.Add(k.Kty, k.Crv, k.X, k.Y)
	f.Add("EC", "P-256", "", "")
	f.Fuzz(func(t *testing.T, kty, crv, x, y string) {
		pk := ProofKey{Kty: kty, Crv: crv, X: x, Y: y}
		pub, err := pk.PublicKey()
		if err != nil {
			if !errors.Is(err, ErrKey) {
				t.Errorf("PublicKey error %v does not wrap ErrKey", err)
			}
			return
		}
		back := ProofKeyOf(pub)
		if back.X != x || back.Y != y {
			t.Errorf("accepted key %+v writes back as %+v", pk, back)
		}
	})
}

func BenchmarkVerify(b *testing.B) {
	pk := ProofKeyOf(&pythonKey(b).PublicKey)
	b.ReportAllocs()
	for b.Loop() {
		if err := Verify(pythonRequest(pythonSignature), pk, pythonTime, DefaultPolicy(), time.Minute); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSign(b *testing.B) {
	key := pythonKey(b)
	b.ReportAllocs()
	for b.Loop() {
		req, _ := http.NewRequest(http.MethodPost, "https://sisu.xboxlive.com/authorize", strings.NewReader(pythonBody))
		if err := Sign(req, key, pythonTime, DefaultPolicy()); err != nil {
			b.Fatal(err)
		}
	}
}

// TestExtraHeadersSigned: a policy's extra headers are signed after
// Authorization, in the policy's order (issue 42, after the title service
// documentation's signing steps): changing one breaks the signature,
// changing a header the policy does not name does not.
func TestExtraHeadersSigned(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	now := time.Date(2026, 12, 3, 15, 0, 0, 0, time.UTC)
	p := DefaultPolicy()
	p.ExtraHeaders = []string{"x-xbl-contract-version", "Content-Type"}
	signed := func() *http.Request {
		req := httptest.NewRequest(http.MethodGet, "https://profile.xboxlive.com/users/me/profile/settings", nil)
		req.Header.Set("Authorization", "XBL3.0 x=1;t")
		req.Header.Set("x-xbl-contract-version", "2")
		req.Header.Set("Content-Type", "application/json")
		if err := Sign(req, key, now, p); err != nil {
			t.Fatal(err)
		}
		return req
	}
	for _, tc := range []struct {
		name   string
		header string
		value  string
		want   error
	}{
		{"unchanged", "", "", nil},
		{"an extra header changed", "x-xbl-contract-version", "3", ErrSignature},
		{"the second extra header removed", "Content-Type", "", ErrSignature},
		{"another header changed", "Accept-Language", "de-DE", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := signed()
			if tc.header != "" {
				req.Header.Set(tc.header, tc.value)
			}
			err := Verify(req, ProofKeyOf(&key.PublicKey), now, p, time.Minute)
			if !errors.Is(err, tc.want) && (err != nil || tc.want != nil) {
				t.Errorf("Verify: %v, want %v", err, tc.want)
			}
		})
	}
	// The order is the policy's: the same values named the other way round
	// are another digest.
	a := Digest(1, 1, "GET", "/", "", []string{"2", "application/json"}, nil, 0)
	b := Digest(1, 1, "GET", "/", "", []string{"application/json", "2"}, nil, 0)
	if a == b {
		t.Error("extra headers' order does not change the digest")
	}
	if Digest(1, 1, "GET", "/", "", nil, nil, 0) == a {
		t.Error("extra headers do not change the digest")
	}
}
