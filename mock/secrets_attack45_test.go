package mock

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"
)

// attack45RecordText is everything the mock keeps or tells of its calls: the
// record (Calls, as JSON), its HAR export and the request log.
func attack45RecordText(t *testing.T, h *Handler, log *bytes.Buffer) string {
	t.Helper()
	calls, err := json.Marshal(h.Calls(CallFilter{}))
	if err != nil {
		t.Fatal(err)
	}
	var har bytes.Buffer
	if err := h.WriteHAR(&har, CallFilter{}); err != nil {
		t.Fatal(err)
	}
	return string(calls) + "\n" + har.String() + "\n" + log.String()
}

// docs/MOCK.md: "no secret: credentials in URLs and bodies (any field or
// parameter named like a token, code, secret, password, ticket or
// signature, ...) are recorded as `REDACTED`". Parameters and fields
// named like a code (an OAuth "auth_code", "authCode", a
// "verification_code", an "otp_code") sent to a service reach the
// record, the HAR and the log as they were sent: only the exact names
// "code", "device_code" and "user_code" are taken for codes.
func TestAttack45CodeNamedParametersRedacted(t *testing.T) {
	var log bytes.Buffer
	h := Must(New(Config{Logger: slog.New(slog.NewJSONHandler(&log, nil))}))
	tok := Token(xuid1, title1)
	secrets := map[string]string{
		"auth_code":         "S3CRETAUTHCODE0001",
		"authCode":          "S3CRETAUTHCODE0002",
		"verification_code": "S3CRETAUTHCODE0003",
		"otp_code":          "S3CRETAUTHCODE0004",
	}
	q := ""
	for k, v := range secrets {
		q += "&" + k + "=" + v
	}
	do(t, h, "GET", profileURL+q, tok, "")
	body := `{"xuids":["` + xuid2 + `"],"authCode":"S3CRETAUTHCODE0005","verification_code":"S3CRETAUTHCODE0006"}`
	do(t, h, "POST", "https://peoplehub.xboxlive.com/users/me/people/batch", tok, body)
	text := attack45RecordText(t, h, &log)
	for _, s := range []string{"S3CRETAUTHCODE0001", "S3CRETAUTHCODE0002", "S3CRETAUTHCODE0003", "S3CRETAUTHCODE0004", "S3CRETAUTHCODE0005", "S3CRETAUTHCODE0006"} {
		if strings.Contains(text, s) {
			i := strings.Index(text, s)
			t.Errorf("a code's value %s reaches the record/HAR/log: ...%s...", s, text[max(0, i-40):min(len(text), i+len(s)+5)])
		}
	}
}

// held: docs/MOCK.md "no secret: ... and of the headers only the
// userhash is kept", the package doc's Config.Logger "(...; never the
// token)", and "every value the sign-in services are sent but the public
// ones": the token, a Signature, cookies, a refresh token posted to
// login.live.com, a device code polled for, and the same credentials in
// a query and a JSON body at a service, reach neither the record, the
// HAR nor the log.
func TestAttack45HeadersAndSignInBodiesNeverRecorded(t *testing.T) {
	var log bytes.Buffer
	h := Must(New(Config{Logger: slog.New(slog.NewTextHandler(&log, nil))}))
	tok := Token(xuid1, title1)
	_, tokText, _ := strings.Cut(tok, ";")
	req, _ := http.NewRequest("GET", profileURL+"&access_token=QSECRETACCESS01&Signature=QSECRETSIG00002", nil)
	req.Header.Set("Authorization", tok)
	req.Header.Set("Signature", "HSECRETSIGNATURE03")
	req.Header.Set("Cookie", "s=HSECRETCOOKIE0004")
	req.Header.Set("X-Xbl-Device-Token", "HSECRETDEVTOKEN005")
	send(t, h, req)
	for _, b := range []struct{ url, ct, body string }{
		{"https://login.live.com/oauth20_token.srf", "application/x-www-form-urlencoded", "grant_type=refresh_token&client_id=0000000048093EE3&refresh_token=BSECRETREFRESH0006&scope=service::user.auth.xboxlive.com::MBI_SSL"},
		{"https://login.live.com/oauth20_token.srf", "application/x-www-form-urlencoded", "grant_type=urn:ietf:params:oauth:grant-type:device_code&client_id=0000000048093EE3&device_code=BSECRETDEVCODE0007"},
		{"https://user.auth.xboxlive.com/user/authenticate", "application/json", `{"RelyingParty":"http://auth.xboxlive.com","TokenType":"JWT","Properties":{"AuthMethod":"RPS","SiteName":"user.auth.xboxlive.com","RpsTicket":"t=BSECRETTICKET00008"}}`},
		{"https://login.live.com/ppsecure/post.srf", "application/x-www-form-urlencoded", "login=a@b.c&passwd=BSECRETPASSWD0009&PPFT=BSECRETFLOW000010"},
		{"https://peoplehub.xboxlive.com/users/me/people/batch", "application/json", "\ufeff" + `{"xuids":["` + xuid2 + `"],"refresh_token":"BSECRETREFRESH0011","nested":{"AccessToken":"BSECRETACCESS0012"}}`},
	} {
		req, _ := http.NewRequest("POST", b.url, strings.NewReader(b.body))
		req.Header.Set("Content-Type", b.ct)
		req.Header.Set("Authorization", tok)
		send(t, h, req)
	}
	text := attack45RecordText(t, h, &log)
	for _, s := range []string{tokText, "QSECRETACCESS01", "QSECRETSIG00002", "HSECRETSIGNATURE03", "HSECRETCOOKIE0004", "HSECRETDEVTOKEN005",
		"BSECRETREFRESH0006", "BSECRETDEVCODE0007", "BSECRETTICKET00008", "BSECRETPASSWD0009", "BSECRETFLOW000010", "BSECRETREFRESH0011", "BSECRETACCESS0012"} {
		if i := strings.Index(text, s); i >= 0 {
			t.Errorf("secret %s reaches the record/HAR/log: ...%s...", s, text[max(0, i-40):min(len(text), i+len(s)+5)])
		}
	}
}

// The brief's "text it echoes is clipped and escaped" (no line of
// docs/MOCK.md or the godoc states it for the mock's answers; the mock
// clips elsewhere, safetext.Clip in session errors, the record's host at
// 256 bytes). A tampered token's 401 echoes nothing of the token (held),
// and markup is JSON-escaped (held); but the 404 NoSuchHost description
// echoes the Host whole: a 4,016-byte host gives a 4,099-byte answer (up
// to net/http's 1 MB header bound over a socket).
func TestAttack45ErrorAnswersEchoNoTokenAndAreClipped(t *testing.T) {
	h := NewHandler()
	tok := Token(xuid1, title1)
	bad := tok[:len(tok)-3] + "zzz"
	r := do(t, h, "GET", profileURL, bad, "")
	if r.status != 401 {
		t.Fatalf("tampered token: %d", r.status)
	}
	_, badText, _ := strings.Cut(bad, ";")
	if strings.Contains(r.body, badText) || strings.Contains(r.body, "zzz") {
		t.Errorf("401 echoes the token: %s", r.body)
	}
	long := strings.Repeat("a", 4000) + "<script>.example"
	req, _ := http.NewRequest("GET", "https://"+long+"/x", nil)
	req.Header.Set("Authorization", tok)
	r = send(t, h, req)
	if len(r.body) > 1024 {
		t.Errorf("404 for a %d-byte host is %d bytes: not clipped", len(long), len(r.body))
	}
	if strings.Contains(r.body, "<script>") {
		t.Errorf("404 echoes markup raw: %.200s", r.body)
	}
}
