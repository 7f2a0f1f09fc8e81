package mock

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
)

// Outside attack on what the mock records of a request's body: the record
// (Calls, WriteHAR, /_fgrl/api/calls and calls.har) keeps no credential.
//
// The promise: docs/MOCK.md:123-127 ("no secret: credentials in URLs and
// bodies (any field or parameter named like a token, code, secret,
// password, ticket or signature ...) are recorded as REDACTED");
// RELIABILITY.md:406 (JSON and form bodies at every host: "every field or
// parameter named a credential ..., at any depth, is REDACTED");
// internal/xblauth/body.go:16-18 (RedactBody: "every string and number
// inside such a field").

// attackProfileBatch is a profile batch lookup, a service call whose body the
// mock reads, sent with a token the mock minted.
func attackProfileBatch(t *testing.T, h *Handler, body string) int {
	t.Helper()
	return do(t, h, "POST", "https://profile.xboxlive.com/users/batch/profile/settings", Token(xuid1, title1), body).status
}

// TestAttackRecordRedactsJSONAfterBOM: a JSON body that starts with a UTF-8
// byte order mark (which .NET's and many other JSON readers skip: RFC 8259
// section 8.1 lets a parser ignore it; a .NET client writing with
// new UTF8Encoding(true) sends one) carries an access_token field. The
// record sees no '{' first, takes the body for a form, finds no '=' pair
// named a credential, and keeps the token verbatim in the HAR.
func TestAttackRecordRedactsJSONAfterBOM(t *testing.T) {
	h := Must(New(Config{}))
	attackProfileBatch(t, h, "\ufeff"+`{"userIds": ["2533274791234567"], "settings": ["Gamertag"], "access_token": "atk-BOM-SECRET"}`)
	noSecretIn(t, exportsOf(t, h), "atk-BOM-SECRET")
}

// TestAttackRecordRedactsKeysInsideCredentialField: a field named a
// credential ("tokens") whose value is an object keyed by the tokens
// themselves, as a map of token to its state is commonly serialized. The
// promise is the field's whole value REDACTED (every string inside such a
// field); the record replaces the object's values and keeps its names,
// the tokens.
func TestAttackRecordRedactsKeysInsideCredentialField(t *testing.T) {
	h := Must(New(Config{}))
	attackProfileBatch(t, h, `{"userIds": ["2533274791234567"], "settings": ["Gamertag"], "tokens": {"atk-KEY-SECRET": "valid"}}`)
	noSecretIn(t, exportsOf(t, h), "atk-KEY-SECRET")
}

// TestAttackRecordRedactsMultipartField: a multipart/form-data body (RFC
// 7578) with a field named access_token. The record splits the body at
// '&' and ';' as if it were an urlencoded form, finds the pair
// ` name="access_token"\r\n\r\natk-...` named " name", and keeps the token.
func TestAttackRecordRedactsMultipartField(t *testing.T) {
	h := Must(New(Config{}))
	req, err := http.NewRequest("POST", "https://profile.xboxlive.com/users/batch/profile/settings",
		strings.NewReader("--atkb\r\nContent-Disposition: form-data; name=\"access_token\"\r\n\r\natk-MULTIPART-SECRET\r\n--atkb--\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "multipart/form-data; boundary=atkb")
	req.Header.Set("Authorization", Token(xuid1, title1))
	send(t, h, req)
	noSecretIn(t, exportsOf(t, h), "atk-MULTIPART-SECRET")
}

// held: credential names spelled other ways a server reads the same: a
// JSON name with a \u escape, a form and a query name percent-encoded, in
// upper case, a '+' for a space; a body cut at the record's 16 KiB inside
// the token. None reaches the record (docs/MOCK.md:123-127).
func TestAttackRecordRedactsRespelledNames(t *testing.T) {
	h := Must(New(Config{}))
	attackProfileBatch(t, h, `{"userIds": ["2533274791234567"], "settings": ["Gamertag"], "acc\u0065ss_t\u006fken": "atk-ESC-SECRET"}`)
	attackProfileBatch(t, h, `userIds=2533274791234567&%61ccess%5Ftoken=atk-FORM-SECRET`)
	attackProfileBatch(t, h, `{"userIds": ["2533274791234567"], "Settings": ["Gamertag"], "REFRESH_TOKEN": "atk-CASE-SECRET"}`)
	do(t, h, "GET", "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag&access%5Ftoken=atk-QUERY-SECRET&Client+Secret=atk-PLUS-SECRET",
		Token(xuid1, title1), "")
	pad := strings.Repeat("x", maxCallBody-40)
	attackProfileBatch(t, h, `{"pad": "`+pad+`", "token": "atk-CUT-SECRET-`+strings.Repeat("y", 64)+`"}`)
	exports := exportsOf(t, h)
	noSecretIn(t, exports, "atk-ESC-SECRET", "atk-FORM-SECRET", "atk-CASE-SECRET", "atk-QUERY-SECRET", "atk-PLUS-SECRET", "atk-CUT-SECRET")
	if !bytes.Contains(exports["WriteHAR"], []byte("REDACTED")) {
		t.Error("the HAR says nothing was redacted")
	}
}

// TestAttackRecordRedactsCredentialUnderDisplayClaims: at a service host the
// rule is every field named a credential, at any depth (RELIABILITY.md:406;
// internal/xblauth/body.go:61-62 "On any host every string and number
// inside a field credentialName names is replaced"). The sign-in services'
// DisplayClaims, kept whole so that a sign-in answer's gamertag and
// userhash stay readable, is kept whole at every host and everything in
// it, a field named "token" or "xsts" included.
func TestAttackRecordRedactsCredentialUnderDisplayClaims(t *testing.T) {
	h := Must(New(Config{}))
	attackProfileBatch(t, h, `{"userIds": ["2533274791234567"], "settings": ["Gamertag"], "DisplayClaims": {"xui": [{"uhs": "1", "token": "atk-DC-SECRET"}]}}`)
	noSecretIn(t, exportsOf(t, h), "atk-DC-SECRET")
}
