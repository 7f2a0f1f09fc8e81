package xblsign

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The request @xboxreplay/xboxlive-auth 5.1.0 sends for a Win32 device
// token (dist/shared/libs/xbox-network/modules/requests/experimental,
// createDummyWin32DeviceToken): a fixed body, proof key and Signature,
// made once, and sent as they are by every caller. The body is its
// JSON.stringify, in the key order of its source.
const (
	win32Body = `{"RelyingParty":"http://auth.xboxlive.com","TokenType":"JWT","Properties":{"AuthMethod":"ProofOfPossession",` +
		`"Id":"91dc36cd-080a-4493-8234-3b585c78b0d5","DeviceType":"Win32","Version":"10.0.19042","ProofKey":{"crv":"P-256",` +
		`"alg":"ES256","use":"sig","kty":"EC","x":"qMKczrK1b5opLCIX-tzyqOWztlbERh1i5sxDzdHrdxs","y":"23uwwgd2oSnWzyjHflRKaLxFsxX0-oE-mECf6c0gOaE"}}}`
	win32Signature = "AAAAAQHcFbBVEuAAHfvqYcbt4rhMgxAKtPiOJgct4UTCX2HqbQNLTHsnwjp9zcYNZMKHEknpyGWNqsIhyXaAd2v8ADmGrfh11oMS1g=="
)

var win32Key = ProofKey{Kty: "EC", Crv: "P-256", Alg: "ES256", Use: "sig",
	X: "qMKczrK1b5opLCIX-tzyqOWztlbERh1i5sxDzdHrdxs", Y: "23uwwgd2oSnWzyjHflRKaLxFsxX0-oE-mECf6c0gOaE"}

// TestVerifyPublishedWin32Signature: a second signer's output, made by
// another implementation than the python vectors', verifies: its time is
// the one it was made at, and it signs the request as sent (no
// Authorization, the body whole).
func TestVerifyPublishedWin32Signature(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "https://device.auth.xboxlive.com/device/authenticate", strings.NewReader(win32Body))
	r.Header.Set("Signature", win32Signature)
	h, err := ParseHeader(win32Signature)
	if err != nil {
		t.Fatal(err)
	}
	signed := time.Date(2025, 8, 25, 11, 6, 40, 0, time.UTC)
	if !h.Time.Equal(signed) || h.Version != 1 {
		t.Errorf("header: version %d, time %v; want 1, %v", h.Version, h.Time, signed)
	}
	if err := Verify(r, win32Key, signed, DefaultPolicy(), time.Minute); err != nil {
		t.Errorf("Verify = %v, want nil", err)
	}
}
