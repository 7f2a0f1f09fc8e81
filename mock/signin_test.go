package mock

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/wiretest"
	"github.com/xblgo/fgrl/internal/xblsign"
)

// The recorded shapes of the sign-in answers (values replaced):
//   - device code and token: the Microsoft identity platform's device
//     authorization grant (docs: "OAuth 2.0 device authorization grant",
//     the successful device code and token responses);
//   - user token and XSTS token: OpenXbox/xbox-webapi-python,
//     tests/data/responses/auth_user_token.json and auth_xsts_token.json.
const (
	recordedDeviceCode = `{"user_code": "A", "device_code": "B", "verification_uri": "https://microsoft.com/devicelogin",
		"expires_in": 900, "interval": 5, "message": "To sign in ..."}`
	recordedMSToken = `{"token_type": "Bearer", "scope": "XboxLive.signin offline_access", "expires_in": 3599,
		"ext_expires_in": 3599, "access_token": "a", "refresh_token": "r"}`
	recordedUserToken = `{"IssueInstant": "2010-10-10T03:04:29.6037497Z", "NotAfter": "2999-10-24T03:04:29.6037497Z",
		"Token": "abcdefg", "DisplayClaims": {"xui": [{"uhs": "abcdefg"}]}}`
	recordedXSTSToken = `{"IssueInstant": "2010-10-10T03:06:35.5251155Z", "NotAfter": "2999-10-10T19:06:35.5251155Z",
		"Token": "123456789", "DisplayClaims": {"xui": [{"gtg": "e", "xid": "2669321029139235", "uhs": "abcdefg",
		"agg": "Adult", "usr": "", "utr": "", "prv": ""}]}}`
)

// post sends a sign-in request through h in-process.
func post(t *testing.T, h *Handler, rawURL, contentType, body string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest("POST", rawURL, strings.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	resp, err := h.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// signInAnswers are the mock's answers along the device-code sign-in, in
// order.
type signInAnswers struct {
	deviceCode, firstPoll, msToken, userToken, xsts []byte
	firstPollStatus, xstsStatus                     int
}

// signInFlow signs in at h as XSAPI's sign-in does (the device code flow,
// then the user and XSTS tokens) and returns every answer.
func signInFlow(t *testing.T, h *Handler) signInAnswers {
	t.Helper()
	var a signInAnswers
	const ms = "https://login.microsoftonline.com/consumers/oauth2/v2.0/"
	form := "application/x-www-form-urlencoded"
	_, a.deviceCode = post(t, h, ms+"devicecode", form, "client_id=c&scope=XboxLive.signin+offline_access")
	var code struct {
		DeviceCode string `json:"device_code"`
	}
	json.Unmarshal(a.deviceCode, &code)
	grant := "grant_type=" + url.QueryEscape("urn:ietf:params:oauth:grant-type:device_code") + "&client_id=c&device_code=" + code.DeviceCode
	a.firstPollStatus, a.firstPoll = post(t, h, ms+"token", form, grant)
	_, a.msToken = post(t, h, ms+"token", form, grant)
	var ms2 struct {
		AccessToken string `json:"access_token"`
	}
	json.Unmarshal(a.msToken, &ms2)
	_, a.userToken = post(t, h, "https://user.auth.xboxlive.com/user/authenticate", "application/json",
		`{"RelyingParty": "http://auth.xboxlive.com", "TokenType": "JWT", "Properties": {"AuthMethod": "RPS", "SiteName": "user.auth.xboxlive.com", "RpsTicket": "d=`+ms2.AccessToken+`"}}`)
	var u struct{ Token string }
	json.Unmarshal(a.userToken, &u)
	a.xstsStatus, a.xsts = post(t, h, "https://xsts.auth.xboxlive.com/xsts/authorize", "application/json",
		`{"RelyingParty": "http://xboxlive.com", "TokenType": "JWT", "Properties": {"UserTokens": ["`+u.Token+`"], "SandboxId": "RETAIL"}}`)
	return a
}

// xstsAuthOf reads a sign-in's XSTS answer: the Authorization its token
// makes, its NotAfter and its user's XUID.
func xstsAuthOf(t *testing.T, a signInAnswers) (auth string, notAfter time.Time, xuid string) {
	t.Helper()
	var x struct {
		NotAfter      time.Time
		Token         string
		DisplayClaims struct {
			Xui []struct {
				Uhs string `json:"uhs"`
				Xid string `json:"xid"`
			} `json:"xui"`
		}
	}
	if err := json.Unmarshal(a.xsts, &x); err != nil || len(x.DisplayClaims.Xui) != 1 || x.NotAfter.IsZero() {
		t.Fatalf("XSTS answer: %v, %s", err, a.xsts)
	}
	return "XBL3.0 x=" + x.DisplayClaims.Xui[0].Uhs + ";" + x.Token, x.NotAfter, x.DisplayClaims.Xui[0].Xid
}

// TestSignInShapes walks the sign-in as a client does and checks each
// answer's shape against the recording.
func TestSignInShapes(t *testing.T) {
	h := NewHandler()
	a := signInFlow(t, h)
	if d := wiretest.ShapeDiff([]byte(recordedDeviceCode), a.deviceCode); d != "" {
		t.Errorf("device code (-recorded +mock):\n%s", d)
	}
	if a.firstPollStatus != 400 || !strings.Contains(string(a.firstPoll), "authorization_pending") {
		t.Errorf("first poll: %d %s", a.firstPollStatus, a.firstPoll)
	}
	if d := wiretest.ShapeDiff([]byte(recordedMSToken), a.msToken); d != "" {
		t.Errorf("token (-recorded +mock):\n%s", d)
	}
	if d := wiretest.ShapeDiff([]byte(recordedUserToken), a.userToken); d != "" {
		t.Errorf("user token (-recorded +mock):\n%s", d)
	}
	if d := wiretest.ShapeDiff([]byte(recordedXSTSToken), a.xsts); a.xstsStatus != 200 || d != "" {
		t.Errorf("XSTS token %d (-recorded +mock):\n%s", a.xstsStatus, d)
	}
	if status, _ := post(t, h, "https://user.auth.xboxlive.com/user/authenticate", "application/json",
		`{"RelyingParty": "http://auth.xboxlive.com", "Properties": {"AuthMethod": "RPS", "RpsTicket": "d=forged"}}`); status != 401 {
		t.Errorf("a forged access token: %d", status)
	}
}

// TestSignInTitle: Config.SignInTitle sets the title the XSTS token is for (no
// test used the option before).
func TestSignInTitle(t *testing.T) {
	for _, tt := range []struct {
		c    Config
		want string
	}{
		{Config{}, "1234567890"},
		{Config{SignInTitle: "42"}, "42"},
	} {
		t.Run(tt.want, func(t *testing.T) {
			auth, _, _ := xstsAuthOf(t, signInFlow(t, Must(New(tt.c))))
			id, err := parseToken(auth)
			if err != nil || id.title != tt.want {
				t.Errorf("the XSTS token is for title %q (%v), want %q", id.title, err, tt.want)
			}
		})
	}
}

// FuzzSignInToken: the mock's token check takes only what it minted, and
// never panics on anything else.
func FuzzSignInToken(f *testing.F) {
	h := NewHandler()
	h.SetAccount(DefaultAccount)
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	f.Add(h.signIn.mint("rt", "2533274791234567", now.Add(time.Hour)), "rt")
	f.Add("rt.MjUz.99999999999.xx", "rt")
	f.Add("", "")
	// Tokens bound to a client (codes.go): the kind names a tag of each
	// value; another client's kind must not take them.
	bound := h.signIn.mint(boundKind("rt", "game-a"), "2533274791234567", now.Add(time.Hour))
	f.Add(bound, boundKind("rt", "game-a"))
	f.Add(bound, boundKind("rt", "other-app"))
	code := h.signIn.mintCode("code", "2533274791234567", now.Add(time.Hour), "game-a", "http://localhost/cb", pkceChallenge)
	k, _, _ := strings.Cut(code, ".")
	f.Add(code, k)
	f.Add(code, boundKind("code", "game-a", "http://localhost/cb", pkceChallenge))
	// A device token (device.go) carries its device's proof key.
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	f.Add(h.signIn.mintDevice(device{did: "F9E13DC7B0997D0D", key: xblsign.ProofKeyOf(&key.PublicKey)}, now), "dt")
	f.Fuzz(func(t *testing.T, tok, kind string) {
		xuid, ok := h.signIn.check(tok, kind, now)
		if ok && h.signIn.mint(kind, xuid, time.Unix(mustExp(tok), 0)) != tok {
			t.Fatalf("check took a token the mock did not mint: %q", tok)
		}
		if d, ok := h.signIn.deviceOf(tok, now); ok {
			if _, err := d.key.PublicKey(); err != nil {
				t.Fatalf("a device token whose key is not one: %q: %v", tok, err)
			}
		}
	})
}

// mustExp reads a token's expiry field.
func mustExp(tok string) int64 {
	parts := strings.Split(tok, ".")
	if len(parts) < 3 {
		return 0
	}
	n, _ := strconv.ParseInt(parts[len(parts)-2], 10, 64)
	return n
}

// TestOneGamertag: the gamertag an XSTS token claims is the gamertag the
// profile service answers for the same XUID, for the default account and
// for one set later; a XUID with no account gets the derived gamertag from
// both.
func TestOneGamertag(t *testing.T) {
	h := NewHandler()
	profileGT := func(xuid string) string {
		req, _ := http.NewRequest("GET", "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag", nil)
		req.Header.Set("Authorization", Token(xuid, title1))
		resp, err := h.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var p profileResponse
		json.NewDecoder(resp.Body).Decode(&p)
		if len(p.ProfileUsers) != 1 || len(p.ProfileUsers[0].Settings) != 1 {
			t.Fatalf("profile answer %+v", p)
		}
		return p.ProfileUsers[0].Settings[0].Value
	}
	xstsGT := func() string { return xstsGamertag(t, h) }
	if x, p := xstsGT(), profileGT(DefaultAccount.XUID); x != DefaultAccount.Gamertag || p != x {
		t.Errorf("default account: XSTS says %q, profile %q; want %q from both", x, p, DefaultAccount.Gamertag)
	}
	h.SetAccount(Account{XUID: "2533274799999999", Gamertag: "Ada"})
	if x, p := xstsGT(), profileGT("2533274799999999"); x != "Ada" || p != "Ada" {
		t.Errorf("account set later: XSTS says %q, profile %q; want Ada from both", x, p)
	}
	if p := profileGT("2533274790000042"); p != "Player0042" {
		t.Errorf("a XUID with no account: profile %q, want Player0042", p)
	}
}

// xstsGamertag signs in at h and returns the gamertag the XSTS token's
// claims name.
func xstsGamertag(t *testing.T, h *Handler) string {
	t.Helper()
	var x struct {
		DisplayClaims struct {
			Xui []struct {
				Gtg string `json:"gtg"`
			} `json:"xui"`
		}
	}
	json.Unmarshal(signInFlow(t, h).xsts, &x)
	if len(x.DisplayClaims.Xui) != 1 {
		t.Fatalf("XSTS claims %+v", x)
	}
	return x.DisplayClaims.Xui[0].Gtg
}

// TestSignInRoutesAnswerTheirMethodOnly: each sign-in call answers only its
// method (405 otherwise, as the services' OAuth endpoints do), a path no
// sign-in service serves 404, and a tenant is one path segment.
func TestSignInRoutesAnswerTheirMethodOnly(t *testing.T) {
	h := NewHandler()
	for _, tc := range []struct {
		method, url string
		want        int
	}{
		{"GET", "https://user.auth.xboxlive.com/user/authenticate", http.StatusMethodNotAllowed},
		{"POST", "https://login.microsoftonline.com/consumers/oauth2/v2.0/authorize", http.StatusMethodNotAllowed},
		{"POST", "https://login.microsoftonline.com/a/b/oauth2/v2.0/token", http.StatusNotFound},
		{"POST", "https://login.microsoftonline.com//oauth2/v2.0/token", http.StatusNotFound},
		{"POST", "https://xsts.auth.xboxlive.com/xsts/authorize/more", http.StatusNotFound},
		{"GET", "https://login.live.com/oauth20_remoteconnect.srf", http.StatusBadRequest}, // served: no code given
	} {
		if got := do(t, h, tc.method, tc.url, "", "").status; got != tc.want {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.url, got, tc.want)
		}
	}
}

// TestSignInTokenExpires: the XSTS token a sign-in gives is taken until
// its NotAfter and refused after it, as the services refuse an expired
// token: 401 with a WWW-Authenticate naming it, at a service and at the
// RTA websocket, with the token already cached from its earlier use. A
// token mock.Token mints never expires. Before, a sign-in's token was
// taken forever, so a client that never renewed went unnoticed.
func TestSignInTokenExpires(t *testing.T) {
	start := time.Date(2026, 12, 3, 20, 0, 0, 0, time.UTC)
	now := start
	h := Must(New(Config{Now: func() time.Time { return now }}))
	auth, notAfter, xuid := xstsAuthOf(t, signInFlow(t, h))
	profile := "https://profile.xboxlive.com/users/xuid(" + xuid + ")/profile/settings?settings=Gamertag"
	for _, tc := range []struct {
		at   time.Time
		want int
	}{
		{start, 200},
		{notAfter.Add(-time.Second), 200},
		{notAfter, 200},
		{notAfter.Add(time.Second), 401},
		{notAfter.Add(30 * 24 * time.Hour), 401},
	} {
		now = tc.at
		res := do(t, h, "GET", profile, auth, "")
		if res.status != tc.want {
			t.Errorf("%v after the sign-in: %d, want %d", tc.at.Sub(start), res.status, tc.want)
		}
		if tc.want == 401 && !strings.Contains(res.header.Get("WWW-Authenticate"), "token_expired") {
			t.Errorf("%v after the sign-in: WWW-Authenticate %q, want one naming the token expired", tc.at.Sub(start), res.header.Get("WWW-Authenticate"))
		}
		if got := do(t, h, "GET", profile, Token(xuid, "1234567890"), "").status; got != 200 {
			t.Errorf("%v after the sign-in, a token mock.Token minted: %d, want 200", tc.at.Sub(start), got)
		}
	}
	// The RTA websocket refuses it before it upgrades.
	req, _ := http.NewRequest("GET", "https://rta.xboxlive.com"+RTAPath, nil)
	req.Header.Set("Authorization", auth)
	req.Header.Set("Sec-WebSocket-Protocol", RTASubprotocol)
	if got := send(t, h, req).status; got != 401 {
		t.Errorf("RTA with the expired token: %d, want 401", got)
	}
}

// TestSignInTokenExpiresOnAnyClock: a sign-in's XSTS token is taken until
// its NotAfter and refused the second after, whatever instant the mock's
// clock (Config.Now) is set to: the zero time, one whose NotAfter is 1970's
// first second or before it, one between seconds. Before, a NotAfter at or
// before 1970 made a token the mock refused at once as not its own (an
// expiry of 0 meant "never").
func TestSignInTokenExpiresOnAnyClock(t *testing.T) {
	for _, tc := range []struct {
		name  string
		start time.Time
	}{
		{"2026", time.Date(2026, 12, 3, 20, 0, 0, 0, time.UTC)},
		{"between seconds, in another zone", time.Date(2026, 12, 3, 20, 0, 0, 999_999_999, time.FixedZone("UTC-8", -8*3600))},
		{"the zero time", time.Time{}},
		{"NotAfter at 1970's first second", time.Unix(0, 0).Add(-xstsTokenLife)},
		{"NotAfter in 1969, between seconds", time.Unix(-1, 500_000_000).Add(-xstsTokenLife)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := tc.start
			h := Must(New(Config{Now: func() time.Time { return now }}))
			auth, notAfter, _ := xstsAuthOf(t, signInFlow(t, h))
			for _, at := range []struct {
				at   time.Time
				want int
			}{
				{tc.start, 200},
				{notAfter, 200},
				{notAfter.Add(time.Second), 401},
			} {
				now = at.at
				if got := do(t, h, "GET", profileURL, auth, "").status; got != at.want {
					t.Errorf("at %v (NotAfter %v): %d, want %d", at.at, notAfter, got, at.want)
				}
			}
		})
	}
}
