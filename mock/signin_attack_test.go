package mock

import (
	"encoding/json"
	"github.com/xblgo/fgrl/internal/racebuild"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock/tlsca"
)

// oldReplayWindow is how many signatures the record kept before it kept
// every one within its window (replays.go): a flood of that many evicted
// the one before them.
const oldReplayWindow = 1 << 13

// attackUserToken signs the default account in at login.live.com and
// user.auth and returns its user token.
func attackUserToken(t *testing.T, h *Handler) string {
	t.Helper()
	lt := liveAccessToken(t, h)
	status, b := post(t, h, "https://user.auth.xboxlive.com/user/authenticate", "application/json",
		`{"RelyingParty": "http://auth.xboxlive.com", "TokenType": "JWT", "Properties": {"AuthMethod": "RPS", "SiteName": "user.auth.xboxlive.com", "RpsTicket": "t=`+lt+`"}}`)
	if status != http.StatusOK {
		t.Fatalf("user token: %d %s", status, b)
	}
	var ut struct{ Token string }
	json.Unmarshal(b, &ut)
	return ut.Token
}

// TestAttackReplayAtTheWindowsEdges: a signature made 5 min ahead of the
// mock's clock is taken (Verify's skew is inclusive); presented again
// exactly 10 min later, when it is exactly 5 min old and still taken by
// Verify, it must be a replay. The record forgets a signature
// 2*signatureSkew after it was first seen, with a strict "<", while
// Verify takes it up to and including that instant.
func TestAttackReplayAtTheWindowsEdges(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	now := t0
	h := Must(New(Config{Now: func() time.Time { return now }}))
	d := newXALDevice(t, h, func() time.Time { return now })
	const url = "https://sisu.xboxlive.com/authenticate"
	body := d.authenticateBody(t, h)
	var sig string
	signedAt := t0.Add(signatureSkew) // the future edge, taken
	if status, b, _ := signedPost(t, h, d.key, signedAt, url, body, func(r *http.Request) { sig = r.Header.Get("Signature") }); status != http.StatusOK {
		t.Fatalf("first presentation at the future edge: %d %s", status, b)
	}
	now = t0.Add(2 * signatureSkew) // the signature is exactly signatureSkew old: the past edge
	if status, b, _ := signedPost(t, h, nil, now, url, body, func(r *http.Request) { r.Header.Set("Signature", sig) }); status != http.StatusForbidden {
		t.Errorf("the same signature again at the past edge of its window: %d %s, want 403 (a replay)", status, b)
	}
}

// TestAttackReplayAfterFlood: a hostile device signs oldReplayWindow (8,192)
// calls of its own, all at once, with its own key: the record of
// signatures is a ring of that many, so another device's signature seen
// a moment before is forgotten and taken again, within its 5 minutes.
// replays.go says a flood "at the sign-in services' limits takes far
// longer than signatureSkew", but nothing limits the signed sign-in calls.
func TestAttackReplayAfterFlood(t *testing.T) {
	racebuild.Skip(t, "a test of sizes, times or heap figures")
	if testing.Short() {
		t.Skip("8,192 signed calls")
	}
	now := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	h := Must(New(Config{Now: func() time.Time { return now }}))
	victim := newXALDevice(t, h, func() time.Time { return now })
	const url = "https://sisu.xboxlive.com/authenticate"
	vbody := victim.authenticateBody(t, h)
	var sig string
	if status, b, _ := signedPost(t, h, victim.key, now, url, vbody, func(r *http.Request) { sig = r.Header.Get("Signature") }); status != http.StatusOK {
		t.Fatalf("victim's call: %d %s", status, b)
	}
	attacker := newXALDevice(t, h, func() time.Time { return now })
	attacker.id = "{22222222-945d-4379-b708-d4ee92c12d99}"
	abody := attacker.authenticateBody(t, h)
	taken := 0
	for i := 0; i < oldReplayWindow; i++ {
		if status, _, _ := signedPost(t, h, attacker.key, now, url, abody, nil); status == http.StatusOK {
			taken++
		}
	}
	t.Logf("flood: %d of %d signed calls taken, on one clock instant", taken, oldReplayWindow)
	if status, b, _ := signedPost(t, h, nil, now, url, vbody, func(r *http.Request) { r.Header.Set("Signature", sig) }); status != http.StatusForbidden {
		t.Errorf("victim's signature replayed after a flood, same instant: %d %s, want 403 (a replay)", status, b)
	}
}

// TestAttackSessionAndTitleTokenBoundToKey: two devices claim the same
// device Id, each with its own proof key. A SISU session and a title
// token minted for the first must not be taken from the second, which
// holds another key: they are bound to the Id's hash (did) only, and the
// Id is self-asserted by whoever asks device/authenticate.
func TestAttackSessionAndTitleTokenBoundToKey(t *testing.T) {
	now := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	h := Must(New(Config{Now: func() time.Time { return now }}))
	victim := newXALDevice(t, h, func() time.Time { return now })
	attacker := newXALDevice(t, h, func() time.Time { return now }) // same Id, another key
	vdt, _ := victim.deviceToken(t, h)
	adt, _ := attacker.deviceToken(t, h)
	_, _, hdr := signedPost(t, h, victim.key, now, "https://sisu.xboxlive.com/authenticate",
		victim.sisuAuthenticateRequest(vdt, testVerifier), nil)
	session := hdr.Get("X-SessionId")
	if session == "" {
		t.Fatal("no session")
	}
	lt := liveAccessToken(t, h)
	t.Run("session", func(t *testing.T) {
		status, b, _ := signedPost(t, h, attacker.key, now, "https://sisu.xboxlive.com/authorize", attacker.authorizeRequest(adt, lt, session), nil)
		if status != http.StatusUnauthorized {
			t.Errorf("another key's device (same Id) with the victim's session: %d %.200s, want 401", status, b)
		}
	})
	t.Run("title token", func(t *testing.T) {
		status, b, _ := signedPost(t, h, victim.key, now, "https://title.auth.xboxlive.com/title/authenticate", map[string]any{"RelyingParty": "http://auth.xboxlive.com", "TokenType": "JWT",
			"Properties": map[string]any{"DeviceToken": vdt, "TitleId": 1016898439}}, nil)
		if status != http.StatusOK {
			t.Fatalf("title token: %d %s", status, b)
		}
		var tt struct{ Token string }
		json.Unmarshal(b, &tt)
		ut := attackUserToken(t, h)
		status, b, _ = signedPost(t, h, attacker.key, now, "https://xsts.auth.xboxlive.com/xsts/authorize", map[string]any{
			"RelyingParty": "http://xboxlive.com", "TokenType": "JWT",
			"Properties": map[string]any{"UserTokens": []string{ut}, "DeviceToken": adt, "TitleToken": tt.Token, "SandboxId": "RETAIL"}}, nil)
		if status != http.StatusUnauthorized {
			t.Errorf("another key's device (same Id) with the victim's title token: %d %.200s, want 401", status, b)
		}
	})
}

// TestAttackUnsignedXSTSWithDeviceToken: an outside attack found that
// xsts/authorize takes a device token and a title token with no Signature
// (or an empty one), against a RELIABILITY.md row that said every such
// call unsigned is 400. The mock takes it on purpose, as the real service
// takes it from a published client: @xboxreplay/xboxlive-auth's
// exchangeTokensForXSTSToken posts the user, device and title tokens with
// no Signature of its own (its caller may pass one among its additional
// headers), and its refusal's text sends users to the Win32 device token
// of EXPERIMENTAL_createDummyWin32DeviceToken for that call. The row now
// says so. A request that is signed is checked: with another key, 403.
func TestAttackUnsignedXSTSWithDeviceToken(t *testing.T) {
	now := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	h := Must(New(Config{Now: func() time.Time { return now }}))
	d := newXALDevice(t, h, func() time.Time { return now })
	dt, _ := d.deviceToken(t, h)
	status, b, _ := signedPost(t, h, d.key, now, "https://title.auth.xboxlive.com/title/authenticate", map[string]any{"RelyingParty": "http://auth.xboxlive.com", "TokenType": "JWT",
		"Properties": map[string]any{"DeviceToken": dt, "TitleId": 1016898439}}, nil)
	if status != http.StatusOK {
		t.Fatalf("title token: %d %s", status, b)
	}
	var tt struct{ Token string }
	json.Unmarshal(b, &tt)
	ut := attackUserToken(t, h)
	body := map[string]any{"RelyingParty": "http://xboxlive.com", "TokenType": "JWT",
		"Properties": map[string]any{"UserTokens": []string{ut}, "DeviceToken": dt, "TitleToken": tt.Token, "SandboxId": "RETAIL"}}
	for name, edit := range map[string]func(*http.Request){
		"no Signature":    nil,
		"empty Signature": func(r *http.Request) { r.Header["Signature"] = []string{""} },
	} {
		status, b, _ := signedPost(t, h, nil, now, "https://xsts.auth.xboxlive.com/xsts/authorize", body, edit)
		if status != http.StatusOK || !strings.Contains(string(b), `"Token"`) {
			t.Errorf("%s, as the published client sends it: %d %.160s, want 200 and a token", name, status, b)
		}
	}
	other := newXALDevice(t, h, func() time.Time { return now })
	if status, b, _ := signedPost(t, h, other.key, now, "https://xsts.auth.xboxlive.com/xsts/authorize", body, nil); status != http.StatusForbidden {
		t.Errorf("signed with another key: %d %.160s, want 403", status, b)
	}
}

// TestAttackServiceCallReplayAfterSignInFlood: the record of signatures is
// one for the sign-in hosts and the services, so an outsider's flood of
// oldReplayWindow signed SISU calls (its own device, its own key) evicts a
// game backend's signed delegated call, which is then taken again,
// replayed by whoever saw it, within its 5 minutes.
func TestAttackServiceCallReplayAfterSignInFlood(t *testing.T) {
	if testing.Short() {
		t.Skip("8,192 signed calls")
	}
	r := newS2SRig(t, tlsca.Partner{})
	s, sig := firstSignedCall(t, r)
	attacker := newXALDevice(t, r.h, func() time.Time { return r.now })
	attacker.id = "{33333333-945d-4379-b708-d4ee92c12d99}"
	abody := attacker.authenticateBody(t, r.h)
	for i := 0; i < oldReplayWindow; i++ {
		signedPost(t, r.h, attacker.key, r.now, "https://sisu.xboxlive.com/authenticate", abody, nil)
	}
	s.key, s.tamper = nil, func(req *http.Request) { req.Header.Set("Signature", sig) }
	if resp, b, err := r.do(s); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("a backend's signed call replayed after an outsider's flood of sign-ins: %v %v %.120s; want 403, a replay", resp.Status, err, b)
	}
}
