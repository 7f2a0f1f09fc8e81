package xblsign

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestAttackVerifyHolds: probes of Verify that held: the same signature over
// another method, query, Authorization (case or whitespace changed) or
// body; r or s zero or the curve's order; a newline inside the header; a
// proof key off the curve; no panic on any.
func TestAttackVerifyHolds(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	pub := ProofKeyOf(&key.PublicKey)
	now := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	p := DefaultPolicy()
	mk := func() *http.Request {
		r, _ := http.NewRequest("POST", "https://sisu.xboxlive.com/authorize?a=1", strings.NewReader(`{"x":1}`))
		r.Header.Set("Authorization", "XBL3.0 x=1;tok")
		return r
	}
	signed := mk()
	if err := Sign(signed, key, now, p); err != nil {
		t.Fatal(err)
	}
	sig := signed.Header.Get("Signature")
	h, _ := ParseHeader(sig)
	n := elliptic.P256().Params().N
	for name, edit := range map[string]func(*http.Request){
		"method":             func(r *http.Request) { r.Method = "PUT" },
		"method's case":      func(r *http.Request) { r.Method = "post" },
		"query":              func(r *http.Request) { r.URL.RawQuery = "a=2" },
		"query's order":      func(r *http.Request) { r.URL.RawQuery = "a=1&" },
		"authorization case": func(r *http.Request) { r.Header.Set("Authorization", "xbl3.0 x=1;tok") },
		// A trailing space is not sent (net/http trims a header's value, and
		// its server reads it trimmed): both sides sign the value as sent
		// (TestAttack82SignHeaderWhitespaceOverTheWire).
		"authorization inner space": func(r *http.Request) { r.Header.Set("Authorization", "XBL3.0  x=1;tok") },
		"body":                      func(r *http.Request) { r.Body = http.NoBody },
		"header with a newline": func(r *http.Request) {
			r.Header.Set("Signature", sig[:50]+"\n"+sig[51:])
		},
		"r zero": func(r *http.Request) { h2 := h; h2.R = [32]byte{}; r.Header.Set("Signature", h2.String()) },
		"s zero": func(r *http.Request) { h2 := h; h2.S = [32]byte{}; r.Header.Set("Signature", h2.String()) },
		"s the order": func(r *http.Request) {
			h2 := h
			n.FillBytes(h2.S[:])
			r.Header.Set("Signature", h2.String())
		},
		"r the order": func(r *http.Request) {
			h2 := h
			n.FillBytes(h2.R[:])
			r.Header.Set("Signature", h2.String())
		},
	} {
		r := mk()
		r.Header.Set("Signature", sig)
		edit(r)
		if err := Verify(r, pub, now, p, 5*time.Minute); err == nil {
			t.Errorf("%s changed: verified", name)
		}
	}
	r := mk()
	r.Header.Set("Signature", sig)
	if err := Verify(r, pub, now, p, 5*time.Minute); err != nil {
		t.Errorf("the signed request itself: %v", err)
	}
	bad := pub
	bad.Y = bad.X // not a point of the curve
	r = mk()
	r.Header.Set("Signature", sig)
	if err := Verify(r, bad, now, p, 5*time.Minute); !errors.Is(err, ErrKey) {
		t.Errorf("a key off the curve: %v, want ErrKey", err)
	}
}
