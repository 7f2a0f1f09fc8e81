package mock

import (
	"crypto/elliptic"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/xblsign"
	"github.com/xblgo/fgrl/mock/tlsca"
)

// signatureTwin returns the other ECDSA signature of the request sig
// signed, (r, n−s): it verifies under the same key, and anyone who saw
// sig can make it.
func signatureTwin(t *testing.T, sig string) string {
	t.Helper()
	h, err := xblsign.ParseHeader(sig)
	if err != nil {
		t.Fatal(err)
	}
	n := elliptic.P256().Params().N
	new(big.Int).Sub(n, new(big.Int).SetBytes(h.S[:])).FillBytes(h.S[:])
	return h.String()
}

// TestSignatureTwinIsAReplay: a signed request presented again with the
// twin of its signature is a replay, at a sign-in service and at a
// service called with a bound X-token, as with the signature itself.
func TestSignatureTwinIsAReplay(t *testing.T) {
	t.Run("sign-in", func(t *testing.T) {
		now := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
		h := Must(New(Config{Now: func() time.Time { return now }}))
		d := newXALDevice(t, h, func() time.Time { return now })
		dt, _ := d.deviceToken(t, h)
		const url = "https://sisu.xboxlive.com/authenticate"
		body := d.sisuAuthenticateRequest(dt, "a-verifier-of-forty-three-characters-or-more-0123")
		var sig string
		if status, b, _ := signedPost(t, h, d.key, now, url, body, func(r *http.Request) { sig = r.Header.Get("Signature") }); status != http.StatusOK {
			t.Fatalf("first presentation: %d %s", status, b)
		}
		tw := signatureTwin(t, sig)
		if status, b, _ := signedPost(t, h, nil, now, url, body, func(r *http.Request) { r.Header.Set("Signature", tw) }); status != http.StatusForbidden {
			t.Errorf("the twin of its signature: %d %s, want 403", status, b)
		}
	})
	t.Run("service call", func(t *testing.T) {
		r := newS2SRig(t, tlsca.Partner{})
		s, sig := firstSignedCall(t, r)
		tw := signatureTwin(t, sig)
		s.key, s.tamper = nil, func(req *http.Request) { req.Header.Set("Signature", tw) }
		resp, b, err := r.do(s)
		if err != nil || resp.StatusCode != http.StatusForbidden || !strings.Contains(string(b), "replay") {
			t.Errorf("the twin of its signature: %v %v %s; want 403, a replay", resp, err, b)
		}
	})
}
