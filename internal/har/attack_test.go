package har

import (
	"bytes"
	"testing"
)

// TestAttackWriterKeepsSecretsItIsGiven: the Writer promises that secrets
// are written redacted "whatever the entry holds", but a password in the
// URL's user info (analyze.Recorder builds its URL with url.URL.String,
// which keeps it) and a token written where the userhash goes
// ("XBL3.0 x=<token>;..."; Redact keeps the userhash, unchecked, up to
// 16 KiB) are written whole.
func TestAttackWriterKeepsSecretsItIsGiven(t *testing.T) {
	for _, tc := range []struct {
		name   string
		entry  Entry
		secret string
	}{
		{"a password in the URL", Entry{Time: t0, Method: "GET", URL: "https://u:pw-SECRET@profile.xboxlive.com/users/me", Status: 200}, "pw-SECRET"},
		{"a token in the userhash's place", Entry{Time: t0, Method: "GET", URL: "https://profile.xboxlive.com/users/me",
			Authorization: "XBL3.0 x=eyJ-token-SECRET;x", Status: 200}, "eyJ-token-SECRET"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			w := NewWriter(&b)
			if err := w.Write(&tc.entry); err != nil {
				t.Fatal(err)
			}
			w.Close()
			if bytes.Contains(b.Bytes(), []byte(tc.secret)) {
				t.Errorf("the HAR holds %q:\n%s", tc.secret, b.Bytes())
			}
		})
	}
}
