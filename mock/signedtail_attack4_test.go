package mock

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// held: a signed body changed inside its signed bytes (the policy's first
// 8,192) is refused 403
// (RELIABILITY.md "Device-bound sign-in", first row).
func TestAttack4SignedBodyHeadChanged(t *testing.T) {
	now := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	h := Must(New(Config{Now: func() time.Time { return now }}))
	d := newXALDevice(t, h, func() time.Time { return now })
	dt, _ := d.deviceToken(t, h)
	const url = "https://title.auth.xboxlive.com/title/authenticate"
	signed := `{"RelyingParty":"http://auth.xboxlive.com","TokenType":"JWT","Properties":{"DeviceToken":"` + dt + `","TitleId":1016898439}}`
	changed := strings.Replace(signed, "1016898439", "4242424242", 1)
	status, b, _ := signedPost(t, h, d.key, now, url, json.RawMessage(signed), func(r *http.Request) {
		r.Body = io.NopCloser(strings.NewReader(changed))
		r.ContentLength = int64(len(changed))
		r.GetBody = nil
	})
	if status != http.StatusForbidden {
		t.Errorf("a signed body changed within its signed bytes: %d %.200s, want 403", status, b)
	}
}

// held: a SISU session opened for one app, presented by the same device
// (its key, its token) with another AppId, is refused 401 (docs/MOCK.md
// "Device-bound sign-in": "a session ... of another device | 401"; sisu.go
// sessionKind binds the app too).
func TestAttack4SISUSessionOfAnotherApp(t *testing.T) {
	now := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	h := Must(New(Config{Now: func() time.Time { return now }}))
	d := newXALDevice(t, h, func() time.Time { return now })
	dt, _ := d.deviceToken(t, h)
	_, _, hdr := signedPost(t, h, d.key, now, "https://sisu.xboxlive.com/authenticate", d.sisuAuthenticateRequest(dt, testVerifier), nil)
	session := hdr.Get("X-SessionId")
	if session == "" {
		t.Fatal("no session")
	}
	lt := liveAccessToken(t, h)
	req := d.authorizeRequest(dt, lt, session)
	req["AppId"] = "00000000441cc96b" // another app
	if status, b, _ := signedPost(t, h, d.key, now, "https://sisu.xboxlive.com/authorize", req, nil); status != http.StatusUnauthorized {
		t.Errorf("a session of another app: %d %.200s, want 401", status, b)
	}
}
