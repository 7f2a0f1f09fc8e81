package mock

import (
	"bytes"
	"strings"
	"testing"
)

// TestAttack2MockHARKeepsBodyOfClippedURL: the mock's record clips a call's
// URL to 1 KiB with safetext.Cut, which may end it inside a percent escape
// ("...%2..."); url.Parse refuses that URL, and since a023952 the HAR
// writer then replaces the call's bodies whole. The same call with a short
// path is written with its body.
//
// Promised (mock/calls.go, WriteHAR): "No secret is written: the
// Authorization header holds the userhash only, and URLs and bodies are
// redacted as the record keeps them." Call.URL (mock/journal.go): "URL is
// https://host/path?query as received (clipped to 1 KiB)". The record
// keeps this body (it holds no credential: TestAttack2's body is a
// profile batch's XUIDs and settings); the HAR writes "REDACTED".
func TestAttack2MockHARKeepsBodyOfClippedURL(t *testing.T) {
	const body = `{"userIds":["2533274791234567"],"settings":["Gamertag"]}`
	for _, n := range []int{10, 400} {
		h := Must(New(Config{Script: Script{Rules: []ScriptRule{{Match: ScriptMatch{PathPrefix: "/users/batch", BodyContains: "userIds"},
			Answers: []ScriptAnswer{{Status: 200, Body: []byte(`{"profileUsers":[]}`)}}}}}}))
		// 28 bytes of "https://profile.xboxlive.com", 31 of this prefix:
		// the 1 KiB cut (at 1021, then "...") falls after an escape's '%'.
		path := "/users/batch/profile/settings/x" + strings.Repeat("%2F", n)
		do(t, h, "POST", "https://profile.xboxlive.com"+path, Token(xuid1, title1), body)
		if c := h.Calls(CallFilter{}); len(c) != 1 || !bytes.Contains(c[0].body, []byte(`"Gamertag"`)) {
			t.Fatalf("path of %d escapes: the record does not keep the body (%d calls)", n, len(c))
		}
		var har bytes.Buffer
		if err := h.WriteHAR(&har, CallFilter{}); err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(har.Bytes(), []byte(`\"settings\":[\"Gamertag\"]`)) {
			i := bytes.Index(har.Bytes(), []byte(`"postData"`))
			t.Errorf("path of %d escapes: the HAR lost the request body the record keeps: %.90s", n, har.Bytes()[max(i, 0):])
		}
	}
}
