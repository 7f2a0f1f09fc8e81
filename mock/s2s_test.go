package mock

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/xblsign"
	"github.com/xblgo/fgrl/mock/tlsca"
	"github.com/xblgo/fgrl/throttle"
)

// The service sign-in's facts these tests mirror come from Microsoft's GDK
// documentation, "Title service calls to Xbox services": XSAS's request
// and answer (IssueInstant, NotAfter two weeks later, Token), its 403 for a
// signature that does not verify, the connection dropped without a
// Business Partner Certificate; XSTS's ServiceToken, SandboxId and
// DelegationToken, its XErr codes; "XBL3.0 x=-;<token>" for a service-auth
// token, taken by multiplayer, string verification and deleted accounts
// only.

// s2sRig is a mock on a clock the test moves, a partner certificate of its
// CA and a proof key.
type s2sRig struct {
	t    testing.TB
	h    *Handler
	ca   *tlsca.CA
	now  time.Time
	conn *tls.ConnectionState // as a handshake with the partner certificate leaves it
	key  *ecdsa.PrivateKey
}

var rigStart = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func newS2SRig(t testing.TB, p tlsca.Partner) *s2sRig {
	t.Helper()
	r := &s2sRig{t: t, now: rigStart}
	r.h = Must(New(Config{Now: func() time.Time { return r.now }}))
	var err error
	if r.ca, err = tlsca.New(); err != nil {
		t.Fatal(err)
	}
	r.conn = partnerConn(t, r.ca, p)
	r.key, _ = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	return r
}

// partnerConn issues a partner certificate and returns the connection
// state a TLS handshake with it would leave.
func partnerConn(t testing.TB, ca *tlsca.CA, p tlsca.Partner) *tls.ConnectionState {
	t.Helper()
	if p.Name == "" {
		p.Name = "game-backend"
	}
	if p.NotBefore.IsZero() {
		p.NotBefore, p.NotAfter = rigStart.Add(-time.Hour), rigStart.Add(tlsca.PartnerLife)
	}
	certPEM, keyPEM, err := ca.IssuePartner(p)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(pair.Certificate[0])
	return &tls.ConnectionState{PeerCertificates: []*x509.Certificate{leaf}, VerifiedChains: [][]*x509.Certificate{{leaf, ca.Cert}}}
}

// sent is one request of a test: who signs it, when, and over what.
type sent struct {
	method, url, auth, body string
	key                     *ecdsa.PrivateKey // nil: not signed
	at                      time.Time         // the signature's instant; zero: the rig's now
	conn                    *tls.ConnectionState
	tamper                  func(*http.Request) // after signing
}

func (r *s2sRig) do(s sent) (*http.Response, []byte, error) {
	r.t.Helper()
	req, _ := http.NewRequest(s.method, s.url, strings.NewReader(s.body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-xbl-contract-version", "1")
	if s.auth != "" {
		req.Header.Set("Authorization", s.auth)
	}
	policy := xblsign.DefaultPolicy()
	if strings.Contains(s.url, ".auth.xboxlive.com/") {
		policy = authPolicy
	}
	if s.key != nil {
		at := s.at
		if at.IsZero() {
			at = r.now
		}
		if err := xblsign.Sign(req, s.key, at, policy); err != nil {
			r.t.Fatal(err)
		}
	}
	if s.tamper != nil {
		s.tamper(req)
	}
	req.TLS = s.conn
	resp, err := r.h.RoundTrip(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b, nil
}

func (r *s2sRig) xsasBody(key *ecdsa.PrivateKey) string {
	b, _ := json.Marshal(map[string]any{"RelyingParty": "http://auth.xboxlive.com", "TokenType": "JWT",
		"Properties": map[string]any{"ProofKey": xblsign.ProofKeyOf(&key.PublicKey)}})
	return string(b)
}

// authAnswer is an XSAS or XSTS answer.
type authAnswer struct {
	IssueInstant, NotAfter time.Time
	Token                  string
	XErr                   int64
	DisplayClaims          struct {
		Xui []map[string]string `json:"xui"`
	}
}

// sToken signs in at XSAS and returns the S-token.
func (r *s2sRig) sToken() string {
	r.t.Helper()
	resp, b, err := r.do(sent{method: "POST", url: "https://service.auth.xboxlive.com/service/authenticate",
		body: r.xsasBody(r.key), key: r.key, conn: r.conn})
	if err != nil || resp.StatusCode != 200 {
		r.t.Fatalf("XSAS: %v %v %s", resp, err, b)
	}
	var a authAnswer
	json.Unmarshal(b, &a)
	return a.Token
}

// xsts asks XSTS for an X-token with the S-token st.
func (r *s2sRig) xsts(st, rp, sandbox, delegation string, key *ecdsa.PrivateKey) (int, authAnswer) {
	r.t.Helper()
	props := map[string]any{"ServiceToken": st, "SandboxId": sandbox}
	if delegation != "" {
		props["DelegationToken"] = delegation
	}
	b, _ := json.Marshal(map[string]any{"RelyingParty": rp, "TokenType": "JWT", "Properties": props})
	resp, body, err := r.do(sent{method: "POST", url: "https://xsts.auth.xboxlive.com/xsts/authorize", body: string(b), key: key})
	if err != nil {
		r.t.Fatal(err)
	}
	var a authAnswer
	json.Unmarshal(body, &a)
	return resp.StatusCode, a
}

// delegationToken signs the user xuid in for the mock's service relying
// party and returns the DelegationToken claim of the answer.
func (r *s2sRig) delegationToken(xuid, sandbox string) string {
	r.t.Helper()
	ut := r.h.signIn.mint("ut", xuid, r.now.Add(time.Hour))
	b, _ := json.Marshal(map[string]any{"RelyingParty": MockServiceRelyingParty, "TokenType": "JWT",
		"Properties": map[string]any{"UserTokens": []string{ut}, "SandboxId": sandbox}})
	resp, body, err := r.do(sent{method: "POST", url: "https://xsts.auth.xboxlive.com/xsts/authorize", body: string(b)})
	if err != nil || resp.StatusCode != 200 {
		r.t.Fatalf("user XSTS: %v %v %s", resp, err, body)
	}
	var a authAnswer
	json.Unmarshal(body, &a)
	return a.DisplayClaims.Xui[0]["DelegationToken"]
}

func isReset(err error) bool { return errors.Is(err, syscall.ECONNRESET) }

func TestServiceAuthenticate(t *testing.T) {
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	cases := []struct {
		name   string
		change func(r *s2sRig, s *sent)
		status int // 0: the connection is dropped
	}{
		{"a partner certificate and a signed request get an S-token", func(*s2sRig, *sent) {}, 200},
		{"no client certificate: the connection is dropped", func(_ *s2sRig, s *sent) { s.conn = nil }, 0},
		{"an unverified client certificate: dropped", func(_ *s2sRig, s *sent) {
			s.conn = &tls.ConnectionState{PeerCertificates: s.conn.PeerCertificates}
		}, 0},
		{"an expired partner certificate: dropped", func(r *s2sRig, s *sent) { r.now = rigStart.Add(tlsca.PartnerLife + time.Hour) }, 0},
		{"signed by another key than the ProofKey: 403", func(_ *s2sRig, s *sent) { s.key = other }, 403},
		{"no Signature: 400, as device.auth answers", func(_ *s2sRig, s *sent) { s.key = nil }, 400},
		{"signed at the edge of the skew window", func(r *s2sRig, s *sent) { s.at = r.now.Add(-signatureSkew) }, 200},
		{"signed past the skew window: 403", func(r *s2sRig, s *sent) { s.at = r.now.Add(-signatureSkew - time.Second) }, 403},
		{"signed ahead past the skew window: 403", func(r *s2sRig, s *sent) { s.at = r.now.Add(signatureSkew + time.Second) }, 403},
		{"a signature over another body: 403", func(_ *s2sRig, s *sent) {
			s.tamper = func(req *http.Request) {
				b, _ := io.ReadAll(req.Body)
				req.Body = io.NopCloser(strings.NewReader(string(b) + " "))
			}
		}, 403},
		{"a ProofKey that is not a P-256 key: 403", func(_ *s2sRig, s *sent) { s.body = strings.Replace(s.body, `"P-256"`, `"P-384"`, 1) }, 403},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newS2SRig(t, tlsca.Partner{})
			s := sent{method: "POST", url: "https://service.auth.xboxlive.com/service/authenticate",
				body: r.xsasBody(r.key), key: r.key, conn: r.conn}
			tc.change(r, &s)
			resp, b, err := r.do(s)
			if tc.status == 0 {
				if !isReset(err) {
					t.Fatalf("got %v, %v; want the connection dropped", resp, err)
				}
				return
			}
			if err != nil || resp.StatusCode != tc.status {
				t.Fatalf("got %v, %v (%s); want %d", resp, err, b, tc.status)
			}
			if tc.status != 200 {
				return
			}
			var a authAnswer
			if err := json.Unmarshal(b, &a); err != nil || a.Token == "" {
				t.Fatalf("answer %s: %v", b, err)
			}
			if got, want := a.NotAfter.Sub(a.IssueInstant), 14*24*time.Hour; got != want {
				t.Errorf("S-token lifetime %v, want %v", got, want)
			}
		})
	}
}

func TestServiceXSTS(t *testing.T) {
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	const me = "2533274791234567"
	cases := []struct {
		name       string
		partner    tlsca.Partner
		rp         string
		sandbox    string
		delegation func(r *s2sRig) string
		key        func(r *s2sRig) *ecdsa.PrivateKey
		st         func(r *s2sRig, st string) string
		wantStatus int
		wantXErr   int64
		wantXUID   string
	}{
		{name: "service auth", rp: "http://xboxlive.com", sandbox: "XDKS.1", wantStatus: 200},
		{name: "delegated auth names the user", rp: "https://xboxlive.com", sandbox: "XDKS.1",
			delegation: func(r *s2sRig) string { return r.delegationToken(me, "XDKS.1") }, wantStatus: 200, wantXUID: me},
		{name: "a delegation token of another sandbox", rp: "http://xboxlive.com", sandbox: "XDKS.1",
			delegation: func(r *s2sRig) string { return r.delegationToken(me, "RETAIL") }, wantStatus: 401, wantXErr: XErrSandboxDenied},
		{name: "a sandbox the certificate is not for", partner: tlsca.Partner{Sandbox: "XDKS.1"}, rp: "http://xboxlive.com",
			sandbox: "RETAIL", wantStatus: 401, wantXErr: XErrSandboxDenied},
		{name: "the certificate's sandbox", partner: tlsca.Partner{Sandbox: "XDKS.1"}, rp: "http://xboxlive.com",
			sandbox: "XDKS.1", wantStatus: 200},
		{name: "a relying party the world does not know", rp: "rp://elsewhere/", sandbox: "RETAIL", wantStatus: 401},
		{name: "an expired S-token", rp: "http://xboxlive.com", sandbox: "RETAIL",
			st: func(r *s2sRig, st string) string { r.now = r.now.Add(14 * 24 * time.Hour); return st }, wantStatus: 401, wantXErr: XErrServiceTokenExpired},
		{name: "an S-token not the mock's", rp: "http://xboxlive.com", sandbox: "RETAIL",
			st: func(_ *s2sRig, st string) string { return st + "x" }, wantStatus: 401, wantXErr: XErrServiceTokenInvalid},
		{name: "signed with another key than the S-token's", rp: "http://xboxlive.com", sandbox: "RETAIL",
			key: func(*s2sRig) *ecdsa.PrivateKey { return other }, wantStatus: 403},
		{name: "not signed", rp: "http://xboxlive.com", sandbox: "RETAIL",
			key: func(*s2sRig) *ecdsa.PrivateKey { return nil }, wantStatus: 400},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newS2SRig(t, tc.partner)
			st := r.sToken()
			if tc.st != nil {
				st = tc.st(r, st)
			}
			dt := ""
			if tc.delegation != nil {
				dt = tc.delegation(r)
				if dt == "" {
					t.Fatal("the user's XSTS answer for the service's relying party has no DelegationToken")
				}
			}
			key := r.key
			if tc.key != nil {
				key = tc.key(r)
			}
			status, a := r.xsts(st, tc.rp, tc.sandbox, dt, key)
			if status != tc.wantStatus || a.XErr != tc.wantXErr {
				t.Fatalf("got %d XErr %#x, want %d XErr %#x", status, a.XErr, tc.wantStatus, tc.wantXErr)
			}
			if status != 200 {
				return
			}
			var xid string
			if len(a.DisplayClaims.Xui) > 0 {
				xid = a.DisplayClaims.Xui[0]["xid"]
			}
			if xid != tc.wantXUID || a.Token == "" {
				t.Errorf("X-token for %q (token %t), want %q", xid, a.Token != "", tc.wantXUID)
			}
		})
	}
}

func TestDelegationTokenOnlyForDelegationRelyingParties(t *testing.T) {
	r := newS2SRig(t, tlsca.Partner{})
	ut := r.h.signIn.mint("ut", "2533274791234567", r.now.Add(time.Hour))
	b, _ := json.Marshal(map[string]any{"RelyingParty": "http://xboxlive.com", "TokenType": "JWT",
		"Properties": map[string]any{"UserTokens": []string{ut}, "SandboxId": "RETAIL"}})
	_, body, err := r.do(sent{method: "POST", url: "https://xsts.auth.xboxlive.com/xsts/authorize", body: string(b)})
	if err != nil || strings.Contains(string(body), "DelegationToken") {
		t.Errorf("a user's answer for http://xboxlive.com: %v %s; want no DelegationToken", err, body)
	}
}

func TestSignedServiceCalls(t *testing.T) {
	const me = "2533274791234567"
	const profile = "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag"
	const session = "https://sessiondirectory.xboxlive.com/serviceconfigs/00000000-0000-0000-0000-000049960298/sessiontemplates/t/sessions/s"
	cases := []struct {
		name      string
		delegated bool
		rp        string
		url       string
		change    func(r *s2sRig, s *sent)
		status    int    // 0: anything but 401 and 403
		counted   string // the key's user the call counts against
	}{
		{name: "a delegated token acts for its user", delegated: true, url: profile, status: 200, counted: UserHash(me)},
		{name: "a service-auth token at multiplayer counts against the service", url: session, counted: "svc:game-backend"},
		{name: "a service-auth token at profile", url: profile, status: 403},
		{name: "no Signature", delegated: true, url: profile, change: func(_ *s2sRig, s *sent) { s.key = nil }, status: 403},
		{name: "a signature over another path", delegated: true, url: profile, change: func(_ *s2sRig, s *sent) {
			s.tamper = func(req *http.Request) { req.URL.RawQuery = "settings=Gamerscore" }
		}, status: 403},
		{name: "a signature over another body", delegated: true, url: session, change: func(_ *s2sRig, s *sent) {
			s.method, s.body = "PUT", `{"properties":{}}`
			s.tamper = func(req *http.Request) { req.Body = io.NopCloser(strings.NewReader(`{"properties":{"x":1}}`)) }
		}, status: 403},
		{name: "a signature replayed past the window", delegated: true, url: profile, change: func(r *s2sRig, s *sent) {
			s.at, r.now = r.now, r.now.Add(signatureSkew+time.Second)
		}, status: 403},
		{name: "a signature replayed at the edge of the window", delegated: true, url: profile, change: func(r *s2sRig, s *sent) {
			s.at, r.now = r.now, r.now.Add(signatureSkew)
		}, status: 200, counted: UserHash(me)},
		{name: "another user's userhash", delegated: true, url: profile, change: func(_ *s2sRig, s *sent) {
			s.auth = "XBL3.0 x=" + UserHash("2533274790000001") + s.auth[strings.IndexByte(s.auth, ';'):]
		}, status: 401},
		{name: "an expired X-token", delegated: true, url: profile, change: func(r *s2sRig, _ *sent) { r.now = r.now.Add(s2sXTokenLife) }, status: 401},
		{name: "a token for a title service's relying party", delegated: true, rp: MockServiceRelyingParty, url: profile, status: 401},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newS2SRig(t, tlsca.Partner{})
			dt := ""
			if tc.delegated {
				dt = r.delegationToken(me, "RETAIL")
			}
			rp := tc.rp
			if rp == "" {
				rp = "http://xboxlive.com"
			}
			status, a := r.xsts(r.sToken(), rp, "RETAIL", dt, r.key)
			if status != 200 {
				t.Fatalf("XSTS: %d", status)
			}
			uhs := "-"
			if tc.delegated {
				uhs = a.DisplayClaims.Xui[0]["uhs"]
			}
			s := sent{method: "GET", url: tc.url, auth: "XBL3.0 x=" + uhs + ";" + a.Token, key: r.key}
			if tc.change != nil {
				tc.change(r, &s)
			}
			resp, b, err := r.do(s)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.status == 0 && (resp.StatusCode == 401 || resp.StatusCode == 403),
				tc.status != 0 && resp.StatusCode != tc.status:
				t.Fatalf("got %d %s, want %d", resp.StatusCode, b, tc.status)
			}
			if tc.name == "an expired X-token" && resp.Header.Get("WWW-Authenticate") == "" {
				t.Error("a 401 for an expired X-token names no WWW-Authenticate")
			}
			if tc.counted == "" {
				return
			}
			scope := "profile"
			if tc.url == session {
				scope = "mpsd"
			}
			d, err := r.h.Counts(throttle.Key{User: tc.counted, Title: "1234567890", Scope: scope})
			if err != nil || d.Counts.Burst.Count != 1 {
				t.Errorf("counts of %s: %+v, %v; want one call", tc.counted, d.Counts, err)
			}
		})
	}
}

func TestServiceSignInLeavesNoSecret(t *testing.T) {
	const me = "2533274791234567"
	r := newS2SRig(t, tlsca.Partner{})
	var log strings.Builder
	r.h = Must(New(Config{Now: func() time.Time { return r.now }, Logger: slog.New(slog.NewTextHandler(&log, nil))}))
	st := r.sToken()
	dt := r.delegationToken(me, "RETAIL")
	_, svc := r.xsts(st, "http://xboxlive.com", "RETAIL", "", r.key)
	_, dlg := r.xsts(st, "http://xboxlive.com", "RETAIL", dt, r.key)
	resp, _, err := r.do(sent{method: "GET", url: "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag",
		auth: "XBL3.0 x=" + UserHash(me) + ";" + dlg.Token, key: r.key})
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("delegated call: %v %v", resp, err)
	}
	exports := exportsOf(t, r.h)
	exports["Logger"] = []byte(log.String())
	d, _ := r.key.Bytes()
	secrets := []string{st, dt, svc.Token, dlg.Token, string(d), base64.RawURLEncoding.EncodeToString(d), base64.StdEncoding.EncodeToString(d)}
	for _, s := range secrets[:4] {
		if len(s) < 40 {
			t.Fatalf("a token of %d bytes: the test would prove nothing", len(s))
		}
	}
	noSecretIn(t, exports, secrets...)
	// Nor a signature, which a replay within the window could reuse.
	for _, c := range r.h.Calls(CallFilter{}) {
		if b, _ := json.Marshal(c); strings.Contains(string(b), "AAAAAQ") {
			t.Errorf("a call's record holds a Signature: %s", b)
		}
	}
}

func TestPartnerCertificateOverTLS(t *testing.T) {
	srv := NewTLSServer(nil)
	defer srv.Close()
	otherCA, _ := tlsca.New()
	issue := func(ca *tlsca.CA) []tls.Certificate {
		certPEM, keyPEM, err := ca.IssuePartner(tlsca.Partner{Name: "game-backend"})
		if err != nil {
			t.Fatal(err)
		}
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			t.Fatal(err)
		}
		return []tls.Certificate{pair}
	}
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	body, _ := json.Marshal(map[string]any{"RelyingParty": "http://auth.xboxlive.com", "TokenType": "JWT",
		"Properties": map[string]any{"ProofKey": xblsign.ProofKeyOf(&key.PublicKey)}})
	cases := []struct {
		name   string
		certs  []tls.Certificate
		wantOK bool
	}{
		{"the mock CA's partner certificate", issue(srv.CA), true},
		{"no client certificate", nil, false},
		{"a certificate of another CA", issue(otherCA), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := srv.Transport().(*http.Transport).Clone()
			// The certificate is presented whatever CAs the server names (Go's
			// client sends one from Certificates only when its issuer is among
			// them, and the server asks without requiring one: with
			// Certificates, the other CA's certificate was never sent and the
			// case judged a client without one).
			var asked atomic.Bool
			tr.TLSClientConfig.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
				asked.Store(true)
				if len(tc.certs) == 0 {
					return &tls.Certificate{}, nil
				}
				return &tc.certs[0], nil
			}
			defer tr.CloseIdleConnections()
			req, _ := http.NewRequest("POST", "https://service.auth.xboxlive.com/service/authenticate", strings.NewReader(string(body)))
			req.Header.Set("Content-Type", "application/json")
			if err := xblsign.Sign(req, key, time.Now(), authPolicy); err != nil {
				t.Fatal(err)
			}
			resp, err := tr.RoundTrip(req)
			if resp != nil {
				resp.Body.Close()
			}
			if got := err == nil && resp.StatusCode == 200; got != tc.wantOK {
				t.Errorf("got %v, %v; want success %t", resp, err, tc.wantOK)
			}
			if !asked.Load() {
				t.Error("the server never asked for a client certificate")
			}
		})
	}
}

// firstSignedCall makes a user's profile read through r, signed with the
// key its X-token is bound to, and returns the call and its Signature.
func firstSignedCall(t *testing.T, r *s2sRig) (sent, string) {
	t.Helper()
	const me = "2533274791234567"
	_, a := r.xsts(r.sToken(), "http://xboxlive.com", "RETAIL", r.delegationToken(me, "RETAIL"), r.key)
	var sig string
	s := sent{method: "GET", url: "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag",
		auth: "XBL3.0 x=" + UserHash(me) + ";" + a.Token, key: r.key, tamper: func(req *http.Request) { sig = req.Header.Get("Signature") }}
	if resp, b, err := r.do(s); err != nil || resp.StatusCode != 200 {
		t.Fatalf("first: %v %v %s", resp, err, b)
	}
	return s, sig
}

func TestSignedCallReplayedWithinTheWindow(t *testing.T) {
	r := newS2SRig(t, tlsca.Partner{})
	s, sig := firstSignedCall(t, r)
	r.now = r.now.Add(time.Minute)
	s.key, s.tamper = nil, func(req *http.Request) { req.Header.Set("Signature", sig) }
	if resp, b, err := r.do(s); err != nil || resp.StatusCode != 403 {
		t.Errorf("the same signature a minute later: %v %v %s; want 403", resp, err, b)
	}
}

// FuzzServiceSignIn: whatever XSAS, XSTS or a service is sent as a
// service's request (a body, an Authorization naming a bound X-token, a
// Signature), nothing is taken that this mock did not mint and the
// request's key did not sign: no 2xx, no panic.
func FuzzServiceSignIn(f *testing.F) {
	r := newS2SRig(f, tlsca.Partner{})
	f.Add(uint8(0), "", "", []byte(r.xsasBody(r.key)))
	f.Add(uint8(1), "", "AAAAAQHPR6izYEzPeW1W5ghsfJP+Vzop0bEleqi6+XNG1eMt2htQr22W84Nku4y4fLqnryN1dFZF/0RuLD3UyY5U3uaBr37p+27TuA==",
		[]byte(`{"RelyingParty":"http://xboxlive.com","TokenType":"JWT","Properties":{"ServiceToken":"st.AAAA.1.x","SandboxId":"RETAIL"}}`))
	f.Add(uint8(2), "XBL3.0 x=-;xs.AAAA.9999999999.abc", "", []byte(nil))
	f.Add(uint8(2), "XBL3.0 x=1;xd."+strings.Repeat("A", 600)+".1.x", "", []byte("{}"))
	urls := []string{"https://service.auth.xboxlive.com/service/authenticate", "https://xsts.auth.xboxlive.com/xsts/authorize",
		"https://sessiondirectory.xboxlive.com/serviceconfigs/00000000-0000-0000-0000-000049960298/sessiontemplates/t/sessions/s"}
	f.Fuzz(func(t *testing.T, which uint8, auth, sig string, body []byte) {
		r.t = t
		req, _ := http.NewRequest("POST", urls[int(which)%len(urls)], strings.NewReader(string(body)))
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		if sig != "" {
			req.Header.Set("Signature", sig)
		}
		req.TLS = r.conn
		resp, err := r.h.RoundTrip(req)
		if err != nil {
			return // a dropped connection
		}
		resp.Body.Close()
		if resp.StatusCode < 300 {
			t.Errorf("%s with Authorization %q, Signature %q, body %q: %d", req.URL, auth, sig, body, resp.StatusCode)
		}
	})
}

// BenchmarkDelegatedCall: a delegated X-token's call, its signature made
// and verified (ECDSA P-256 both ways), through the whole pipeline.
func BenchmarkDelegatedCall(b *testing.B) {
	const me = "2533274791234567"
	r := newS2SRig(b, tlsca.Partner{})
	r.h = Must(New(Config{Now: func() time.Time { return r.now }, LegacyTitles: []string{"1234567890"}})) // uncounted
	_, a := r.xsts(r.sToken(), "http://xboxlive.com", "RETAIL", r.delegationToken(me, "RETAIL"), r.key)
	auth := "XBL3.0 x=" + UserHash(me) + ";" + a.Token
	b.ReportAllocs()
	for b.Loop() {
		resp, body, err := r.do(sent{method: "GET", url: "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag", auth: auth, key: r.key})
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("%v %v %s", resp, err, body)
		}
	}
}

// TestTokenKindsDoNotCross: a token of one kind is refused where another
// is asked for, even when its payload could be read as the other's: a
// delegation token whose sandbox holds two null-separated parts (a device
// token's layout: ID, x, y) is no device token at xsts/authorize, and a
// device token is no delegation token.
func TestTokenKindsDoNotCross(t *testing.T) {
	const me = "2533274791234567"
	r := newS2SRig(t, tlsca.Partner{})
	dg := r.delegationToken(me, "x\x00y")
	if dg == "" {
		t.Fatal("no delegation token for the sandbox: the test's premise is wrong")
	}
	ut := r.h.signIn.mint("ut", me, r.now.Add(time.Hour))
	b, _ := json.Marshal(map[string]any{"RelyingParty": "http://xboxlive.com", "TokenType": "JWT",
		"Properties": map[string]any{"UserTokens": []string{ut}, "DeviceToken": dg}})
	resp, body, err := r.do(sent{method: "POST", url: "https://xsts.auth.xboxlive.com/xsts/authorize", body: string(b)})
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a delegation token as the DeviceToken: %v %v %s; want 401", resp, err, body)
	}

	d := newXALDevice(t, r.h, func() time.Time { return r.now })
	dt, _ := d.deviceToken(t, r.h)
	if status, a := r.xsts(r.sToken(), MockServiceRelyingParty, "RETAIL", dt, r.key); status != http.StatusUnauthorized {
		t.Errorf("a device token as the DelegationToken: %d %+v; want 401", status, a)
	}
}
