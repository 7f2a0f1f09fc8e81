package mock

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const liveDeviceClient = "00000000441cc96b" // a published device-code client ID (Minecraft's, in public clients)

// liveConnect asks login.live.com for a device code.
func liveConnect(t *testing.T, h *Handler, clientID string) (device, user string) {
	t.Helper()
	status, b := post(t, h, "https://login.live.com/oauth20_connect.srf", "application/x-www-form-urlencoded",
		url.Values{"client_id": {clientID}, "scope": {sisuScope}, "response_type": {"device_code"}}.Encode())
	var a struct {
		DeviceCode string `json:"device_code"`
		UserCode   string `json:"user_code"`
	}
	if status != http.StatusOK || json.Unmarshal(b, &a) != nil {
		t.Fatalf("oauth20_connect.srf: %d %s", status, b)
	}
	return a.DeviceCode, a.UserCode
}

// livePoll polls login.live.com's token endpoint once and returns the
// status and the error, or "" with the access token.
func livePoll(t *testing.T, h *Handler, grant, clientID, code string) (int, string, string) {
	t.Helper()
	status, b, tok := liveTokenAt(t, h, url.Values{"grant_type": {grant}, "client_id": {clientID}, "device_code": {code}})
	if status == http.StatusOK && tok.AccessToken == "" {
		t.Fatalf("200 without a token: %s", b)
	}
	return status, tok.Error, tok.AccessToken
}

// TestLiveDeviceCodeShape: oauth20_connect.srf answers as login.live.com
// was recorded to (the page microsoft.com/link, 15 minutes, every 5
// seconds, no verification_uri_complete).
func TestLiveDeviceCodeShape(t *testing.T) {
	h := NewHandler()
	_, b := post(t, h, "https://login.live.com/oauth20_connect.srf", "application/x-www-form-urlencoded",
		url.Values{"client_id": {liveDeviceClient}, "scope": {sisuScope}, "response_type": {"device_code"}}.Encode())
	var got map[string]any
	json.Unmarshal(b, &got)
	for _, k := range []string{"user_code", "device_code"} {
		if s, _ := got[k].(string); s == "" {
			t.Errorf("no %s in %s", k, b)
		}
		delete(got, k)
	}
	want := map[string]any{"verification_uri": "https://www.microsoft.com/link", "expires_in": 900.0, "interval": 5.0}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("oauth20_connect.srf mismatch (-want +got):\n%s", diff)
	}
}

// TestLiveDeviceCodeSignIn: by default the code is approved at once, so a
// test signs in with no browser, polling under either grant name clients
// send; the token is a Microsoft account client's ("t=" at user.auth) and
// the code is good once.
func TestLiveDeviceCodeSignIn(t *testing.T) {
	for _, grant := range []string{deviceCodeGrant, "device_code"} {
		t.Run(grant, func(t *testing.T) {
			h := NewHandler()
			code, _ := liveConnect(t, h, liveDeviceClient)
			status, e, tok := livePoll(t, h, grant, liveDeviceClient, code)
			if status != http.StatusOK {
				t.Fatalf("first poll: %d %s", status, e)
			}
			if got := userToken(t, h, "t="+tok); got != http.StatusOK {
				t.Errorf("user token for the device code's access token: %d", got)
			}
			if _, e, _ := livePoll(t, h, grant, liveDeviceClient, code); e != "expired_token" {
				t.Errorf("second poll of a redeemed code: %q, want expired_token", e)
			}
		})
	}
}

// TestLiveDeviceCodePolls: a world whose user approves at the page keeps
// the code pending (and slow_down to a poll within 5 seconds of the last)
// until the user code is entered at oauth20_remoteconnect.srf; a world
// whose user declines answers access_denied; a code is refused to another
// client, and expires after 15 minutes.
func TestLiveDeviceCodePolls(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	now := t0
	clock := func() time.Time { return now }
	h := Must(New(Config{Now: clock, World: World{DeviceCodes: deviceCodesPage}}))
	code, user := liveConnect(t, h, liveDeviceClient)
	steps := []struct {
		at   time.Duration
		do   func()
		want string
	}{
		{at: 0, want: "authorization_pending"},
		{at: time.Second, want: "slow_down"},
		{at: 7 * time.Second, want: "authorization_pending"},
		{at: 8 * time.Second, do: func() {
			if r := do(t, h, "GET", "https://login.live.com/oauth20_remoteconnect.srf?otc=WRONG123", "", ""); r.status != http.StatusBadRequest {
				t.Errorf("a wrong code at the page: %d", r.status)
			}
			if r := do(t, h, "GET", "https://login.live.com/oauth20_remoteconnect.srf?otc="+strings.ToLower(user), "", ""); r.status != http.StatusOK {
				t.Errorf("the code at the page: %d %s", r.status, r.body)
			}
		}, want: "slow_down"},
		{at: 20 * time.Second, want: ""},
	}
	for _, s := range steps {
		now = t0.Add(s.at)
		if s.do != nil {
			s.do()
		}
		if _, e, _ := livePoll(t, h, deviceCodeGrant, liveDeviceClient, code); e != s.want {
			t.Errorf("at %v: %q, want %q", s.at, e, s.want)
		}
	}

	other, _ := liveConnect(t, h, liveDeviceClient)
	if _, e, _ := livePoll(t, h, deviceCodeGrant, "000000004C12AE6F", other); e != "invalid_grant" {
		t.Errorf("another client's code: %q, want invalid_grant", e)
	}
	now = now.Add(liveDeviceCodeLife)
	if _, e, _ := livePoll(t, h, deviceCodeGrant, liveDeviceClient, other); e != "expired_token" {
		t.Errorf("a code 15 minutes old: %q, want expired_token", e)
	}

	deny := Must(New(Config{World: World{DeviceCodes: deviceCodesDeny}}))
	code, _ = liveConnect(t, deny, liveDeviceClient)
	if _, e, _ := livePoll(t, deny, deviceCodeGrant, liveDeviceClient, code); e != "access_denied" {
		t.Errorf("a declining user's code: %q, want access_denied", e)
	}
}

// TestLiveDeviceCodesBounded: the mock keeps one fixed-size entry per
// device code for the latest 4,096; a code that many codes old is
// expired, however fast the codes come, and a flood of polls of one code
// is answered slow_down and costs nothing more.
func TestLiveDeviceCodesBounded(t *testing.T) {
	now := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	h := Must(New(Config{Now: func() time.Time { return now }, World: World{DeviceCodes: deviceCodesPage}}))
	first, _ := liveConnect(t, h, liveDeviceClient)
	for range pendingWindow {
		liveConnect(t, h, liveDeviceClient)
	}
	if _, e, _ := livePoll(t, h, deviceCodeGrant, liveDeviceClient, first); e != "expired_token" {
		t.Errorf("a code %d codes old: %q, want expired_token", pendingWindow, e)
	}
	if got := len(h.signIn.pending.ring); got != pendingWindow {
		t.Errorf("%d entries kept, want %d", got, pendingWindow)
	}
	last, _ := liveConnect(t, h, liveDeviceClient)
	livePoll(t, h, deviceCodeGrant, liveDeviceClient, last)
	for i := range 100 {
		if _, e, _ := livePoll(t, h, deviceCodeGrant, liveDeviceClient, last); e != "slow_down" {
			t.Fatalf("poll %d at the same instant: %q, want slow_down", i, e)
		}
	}
}

// TestLiveDeviceCodeHoldsNoSecret: the device code, the user code and the
// token are in no export of the record of calls, the page's otc included.
func TestLiveDeviceCodeHoldsNoSecret(t *testing.T) {
	h := Must(New(Config{World: World{DeviceCodes: deviceCodesPage}}))
	code, user := liveConnect(t, h, liveDeviceClient)
	do(t, h, "GET", "https://login.live.com/oauth20_remoteconnect.srf?otc="+user, "", "")
	_, _, tok := livePoll(t, h, deviceCodeGrant, liveDeviceClient, code)
	if tok == "" {
		t.Fatal("no sign-in")
	}
	noSecretIn(t, exportsOf(t, h), code, user, tok)
}

// TestIdentityDeviceCodeGrantNames: the identity platform's token
// endpoint takes a device code poll under RFC 8628's grant type and under
// the short name some clients send.
func TestIdentityDeviceCodeGrantNames(t *testing.T) {
	const ms = "https://login.microsoftonline.com/consumers/oauth2/v2.0/"
	for _, grant := range []string{deviceCodeGrant, "device_code"} {
		h := NewHandler()
		_, b := post(t, h, ms+"devicecode", "application/x-www-form-urlencoded", "client_id=c&scope=XboxLive.signin")
		var dc struct {
			DeviceCode string `json:"device_code"`
		}
		json.Unmarshal(b, &dc)
		form := url.Values{"grant_type": {grant}, "client_id": {"c"}, "device_code": {dc.DeviceCode}}.Encode()
		post(t, h, ms+"token", "application/x-www-form-urlencoded", form) // pending
		if status, b := post(t, h, ms+"token", "application/x-www-form-urlencoded", form); status != http.StatusOK {
			t.Errorf("grant %q: %d %s", grant, status, b)
		}
	}
}

// TestForgedDeviceCodeLeavesTheRealOneAlone: a poll with a code this mock
// did not mint that names a real code's serial (its kind and serial
// copied, its signature not) is expired_token and changes nothing of the
// real code: its client's next poll, at the same instant, gets the tokens,
// not slow_down.
func TestForgedDeviceCodeLeavesTheRealOneAlone(t *testing.T) {
	now := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	h := Must(New(Config{Now: func() time.Time { return now }}))
	code, _ := liveConnect(t, h, liveDeviceClient)
	i := strings.LastIndexByte(code, '.')
	forged := code[:i+1] + strings.Repeat("A", len(code)-i-1)
	if forged == code {
		t.Fatal("the forged code is the real one")
	}
	for range 3 {
		if _, e, _ := livePoll(t, h, deviceCodeGrant, liveDeviceClient, forged); e != "expired_token" {
			t.Errorf("forged code: %q, want expired_token", e)
		}
	}
	if status, e, tok := livePoll(t, h, deviceCodeGrant, liveDeviceClient, code); status != http.StatusOK || tok == "" {
		t.Errorf("the real code after forged polls: %d %q, want the tokens", status, e)
	}
}
