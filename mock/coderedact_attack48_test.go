package mock

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// Promise (docs/MOCK.md): "no secret: credentials in URLs and bodies (any
// field or parameter named like a token, code, secret, password, ticket or
// signature, ...) are recorded as `REDACTED`", and credentialName's godoc
// (internal/xblauth): "OAuth 2.0's codes, tokens, secrets, verifiers and
// assertions (RFC 6749, RFC 7636, RFC 7521) ... or a code (a name ending in
// "code" ...)". Other spellings of the same credentials sent to a service
// reach the record, the HAR and the log whole:
//   - "code[]" (the array form PHP, Rails and Express's qs read as "code"),
//   - "recovery_codes" / "backupCodes" (codes, plural),
//   - "codeVerifier" / "code-verifier" (RFC 7636's code_verifier, camel
//     case or dashed),
//   - "clientAssertion" (RFC 7521's client_assertion, camel case).
func TestAttack48MockCodeSpellingsRedacted(t *testing.T) {
	cases := []struct{ name, method, url, body, secret string }{
		{"code[] query", "GET", profileURL + "&code[]=QSECRETARRAYCODE01", "", "QSECRETARRAYCODE01"},
		{"code[] form", "POST", attack48BatchURL, "xuids=" + xuid2 + "&code[]=FSECRETARRAYCODE02", "FSECRETARRAYCODE02"},
		{"recovery_codes json", "POST", attack48BatchURL, `{"xuids":["` + xuid2 + `"],"recovery_codes":["JSECRETRECOVERY03"]}`, "JSECRETRECOVERY03"},
		{"backupCodes json nested", "POST", attack48BatchURL, `{"xuids":["` + xuid2 + `"],"user":{"backupCodes":["JSECRETBACKUPC04"]}}`, "JSECRETBACKUPC04"},
		{"codeVerifier json", "POST", attack48BatchURL, `{"xuids":["` + xuid2 + `"],"codeVerifier":"JSECRETVERIFIER05"}`, "JSECRETVERIFIER05"},
		{"code-verifier query", "GET", profileURL + "&code-verifier=QSECRETVERIFIER06", "", "QSECRETVERIFIER06"},
		{"clientAssertion json", "POST", attack48BatchURL, `{"xuids":["` + xuid2 + `"],"clientAssertion":"JSECRETASSERT07"}`, "JSECRETASSERT07"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var log bytes.Buffer
			h := Must(New(Config{Logger: slog.New(slog.NewJSONHandler(&log, nil))}))
			do(t, h, c.method, c.url, Token(xuid1, title1), c.body)
			text := attack45RecordText(t, h, &log)
			if i := strings.Index(text, c.secret); i >= 0 {
				t.Errorf("%s's value reaches the record/HAR/log: ...%s...", c.name, text[max(0, i-40):min(len(text), i+len(c.secret)+5)])
			}
		})
	}
}

// held: names ending in "code" in other cases, with dots or dashes, alone
// ("Code"), in a query, a fragment, a form, JSON nested in objects and
// arrays, and a multipart body, are redacted in the record, the HAR and
// the log.
func TestAttack48MockCodeVariantsHeld(t *testing.T) {
	var log bytes.Buffer
	h := Must(New(Config{Logger: slog.New(slog.NewJSONHandler(&log, nil))}))
	tok := Token(xuid1, title1)
	do(t, h, "GET", profileURL+"&Code=HSECRET0001&AUTH_CODE=HSECRET0002&auth.code=HSECRET0003&auth-code=HSECRET0004&%63ode=HSECRET0005", tok, "")
	do(t, h, "GET", "https://profile.xboxlive.com/users/me/profile/settings#code=HSECRET0006&x=1?settings=Gamertag", tok, "")
	do(t, h, "POST", attack48BatchURL, tok, "xuids="+xuid2+"&PassCode=HSECRET0007&otp-code=HSECRET0008")
	do(t, h, "POST", attack48BatchURL, tok, `{"xuids":["`+xuid2+`"],"a":[{"b":{"Code":"HSECRET0009","AuthCode":["HSECRET0010"]}}],"\u0063ode":"HSECRET0011"}`)
	do(t, h, "POST", attack48BatchURL, tok, "--b\r\nContent-Disposition: form-data; name=\"code\"\r\n\r\nHSECRET0012\r\n--b--\r\n")
	text := attack45RecordText(t, h, &log)
	for i := 1; i <= 12; i++ {
		s := "HSECRET" + strings.Repeat("0", 4-len(attack48Itoa(i))) + attack48Itoa(i)
		if j := strings.Index(text, s); j >= 0 {
			t.Errorf("%s reaches the record/HAR/log: ...%s...", s, text[max(0, j-40):min(len(text), j+len(s)+5)])
		}
	}
	// describesCode's names stay: what a test checks of a call.
	do(t, h, "GET", profileURL+"&countryCode=US&languageCode=en", tok, "")
	if text := attack45RecordText(t, h, &log); !strings.Contains(text, "countryCode=US") || !strings.Contains(text, "languageCode=en") {
		t.Error("countryCode / languageCode were hidden")
	}
}

func attack48Itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return string(rune('0'+i/10)) + string(rune('0'+i%10))
}
