package mock

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/xblsign"
)

// TestAttack2ProofKeyHasOneSpelling: a device token (and through it a SISU
// session and a title token, bound to the key's X and Y as strings) must
// name a key in one spelling only, or the same key would bind to another
// tag. device/authenticate takes only unpadded base64url of exactly 32
// bytes: padded, standard-alphabet, and 33-byte (leading zero) spellings
// of the same coordinates are refused. Held.
func TestAttack2ProofKeyHasOneSpelling(t *testing.T) {
	now := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	h := Must(New(Config{Now: func() time.Time { return now }}))
	d := newXALDevice(t, h, func() time.Time { return now })
	pk := xblsign.ProofKeyOf(&d.key.PublicKey)
	raw, _ := base64.RawURLEncoding.DecodeString(pk.X)
	for name, x := range map[string]string{
		"padded":       pk.X + "=",
		"standard":     base64.StdEncoding.EncodeToString(raw),
		"leading zero": base64.RawURLEncoding.EncodeToString(append([]byte{0}, raw...)),
		"std alphabet": strings.NewReplacer("-", "+", "_", "/").Replace(pk.X),
	} {
		if x == pk.X {
			continue // this key's X spells the same in that form
		}
		req := d.deviceTokenRequest()
		k := pk
		k.X = x
		req["Properties"].(map[string]any)["ProofKey"] = k
		status, b, _ := signedPost(t, h, d.key, now, "https://device.auth.xboxlive.com/device/authenticate", req, nil)
		if status == http.StatusOK {
			t.Errorf("%s spelling of X (%q): %d %.120s, want refused", name, x, status, b)
		}
	}
}
