package mock

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// held: a login.live.com device code (MOCK.md: "answers RFC 8628's
// authorization_pending, slow_down (a poll within 5 seconds of the last),
// access_denied and expired_token (a code redeemed, 15 minutes old ...)";
// "a device code only by the client that asked for it"): another client's
// poll is invalid_grant and spends nothing; a poll too soon is slow_down;
// the code is redeemed once; a redeemed code polled again is expired_token (slow_down within 5 s).
func TestAttack50LiveDeviceCodeOnceBoundPaced(t *testing.T) {
	now := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	h := Must(New(Config{Now: func() time.Time { return now }}))
	status, b := post(t, h, "https://login.live.com/oauth20_connect.srf", "application/x-www-form-urlencoded",
		url.Values{"client_id": {"000000004C12AE6F"}, "response_type": {"device_code"}, "scope": {"service::user.auth.xboxlive.com::MBI_SSL"}}.Encode())
	if status != http.StatusOK {
		t.Fatalf("device code: %d %s", status, b)
	}
	var dc struct {
		DeviceCode string `json:"device_code"`
	}
	json.Unmarshal(b, &dc)
	poll := func(client, code string) (int, string) {
		st, body, _ := liveTokenAt(t, h, url.Values{"client_id": {client}, "grant_type": {"urn:ietf:params:oauth:grant-type:device_code"}, "device_code": {code}})
		var e struct{ Error string }
		json.Unmarshal(body, &e)
		return st, e.Error
	}
	if st, e := poll("0000000048093EE3", dc.DeviceCode); st != 400 || e != "invalid_grant" {
		t.Errorf("another client's poll: %d %q, want 400 invalid_grant", st, e)
	}
	if st, e := poll("000000004C12AE6F", strings.Repeat("A", 1<<15)); st != 400 || e == "" {
		t.Errorf("a 32 KiB device code: %d %q", st, e)
	}
	if st, e := poll("000000004C12AE6F", dc.DeviceCode); st != 200 {
		t.Fatalf("own client's first poll: %d %q, want the tokens", st, e)
	}
	now = now.Add(time.Second)
	if st, e := poll("000000004C12AE6F", dc.DeviceCode); st != 400 || (e != "expired_token" && e != "slow_down") {
		t.Errorf("a redeemed code polled again: %d %q", st, e)
	}
	now = now.Add(10 * time.Second)
	if st, e := poll("000000004C12AE6F", dc.DeviceCode); st != 400 || e != "expired_token" {
		t.Errorf("a redeemed code polled again: %d %q, want expired_token", st, e)
	}
}

// held: a device token presented at title.auth by another device (signed
// with a key not the token's) is refused ("a session, title token or proof
// key of another device | 401"; "a signature that does not match the
// request, or is another key's | 403").
func TestAttack50DeviceTokenOfAnotherDevice(t *testing.T) {
	h := Must(New(Config{}))
	a := newXALDevice(t, h, time.Now)
	b := newXALDevice(t, h, time.Now)
	b.id = "{33333333-945d-4379-b708-d4ee92c12d99}"
	dtA, _ := a.deviceToken(t, h)
	body := map[string]any{"RelyingParty": "http://auth.xboxlive.com", "TokenType": "JWT",
		"Properties": map[string]any{"AuthMethod": "ProofOfPossession", "DeviceToken": dtA, "TitleId": "1016898439"}}
	status, resp, _ := signedPost(t, h, b.key, time.Now(), "https://title.auth.xboxlive.com/title/authenticate", body, nil)
	if status == http.StatusOK {
		t.Errorf("device B signed with its key and got a title token on device A's token: %s", resp)
	}
}
