package mock

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/xblgo/fgrl/internal/xblsign"
)

// The service-to-service sign-in of a title's backend ("Title service
// calls to Xbox services", GDK documentation): XSAS at
// service.auth.xboxlive.com takes the Business Partner Certificate as the
// client TLS certificate and a signed request naming a proof key, and
// answers an S-token; XSTS exchanges it for an X-token of the service
// itself (service auth) or, with a user's DelegationToken, on the user's
// behalf (delegated auth). Every request after that is signed with the
// proof key.
const serviceAuthHost = "service.auth.xboxlive.com"

// Lifetimes of the service sign-in's tokens: the S-token's default of two
// weeks and the delegation token's 30 days are documented; an X-token's
// eight hours are those of the documentation's sample answer.
const (
	serviceTokenLife    = 14 * 24 * time.Hour
	delegationTokenLife = 30 * 24 * time.Hour
	s2sXTokenLife       = 8 * time.Hour
)

// authPolicy is the signature policy of XSAS and XSTS: version 1, ES256,
// the whole body (documented as long.MaxValue bytes; xblsign bounds what
// it holds at 1 MiB, beyond any sign-in body the mock reads).
var authPolicy = xblsign.Policy{Version: 1, SupportedAlgorithms: []string{"ES256"}, MaxBodyBytes: xblsign.MaxBodyBytes}

// XErr codes of XSTS refusals for services ("Title service calls to Xbox
// services", Delegated Auth Error handling).
const (
	XErrSandboxDenied       = 0x8015DC12 // the sandbox is not the certificate's, or not the user's
	XErrServiceTokenExpired = 0x8015DC1F
	XErrServiceTokenInvalid = 0x8015DC27
)

// maxServiceName bounds a partner certificate's common name, part of every
// token minted for it.
const maxServiceName = 64

// partner returns the Business Partner Certificate r came with: a client
// certificate the TLS handshake verified against the mock's CA (tlsca.CA's
// ClientCAs) and valid at now on the mock's clock. ok is false for none.
func partner(r *http.Request, now time.Time) (*x509.Certificate, bool) {
	if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 || len(r.TLS.VerifiedChains[0]) == 0 {
		return nil, false
	}
	c := r.TLS.VerifiedChains[0][0]
	if now.Before(c.NotBefore) || now.After(c.NotAfter) || c.Subject.CommonName == "" || len(c.Subject.CommonName) > maxServiceName {
		return nil, false
	}
	return c, true
}

// serviceAuthenticate is XSAS. Without a partner certificate valid now the
// connection is dropped, as the documentation describes (a TLS server
// would not have completed the handshake); a signature that does not
// verify against the request's ProofKey is answered 403.
func (s *signIn) serviceAuthenticate(w http.ResponseWriter, r *http.Request) {
	now := s.w.now()
	cert, ok := partner(r, now)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	body, ok := signedBody(w, r)
	if !ok {
		return
	}
	var req struct {
		RelyingParty string
		TokenType    string
		Properties   struct{ ProofKey xblsign.ProofKey }
	}
	if err := json.Unmarshal(body, &req); err != nil || req.RelyingParty != "http://auth.xboxlive.com" || req.TokenType != "JWT" {
		writeError(w, http.StatusBadRequest, "BadRequest", `the body is not an XSAS request (RelyingParty "http://auth.xboxlive.com", TokenType "JWT", Properties.ProofKey)`)
		return
	}
	pub, err := req.Properties.ProofKey.PublicKey()
	if err != nil {
		w.WriteHeader(http.StatusForbidden)
		return
	}
	if !s.verifiedUnder(w, r, req.Properties.ProofKey, authPolicy, false) {
		return
	}
	sandbox := ""
	if ou := cert.Subject.OrganizationalUnit; len(ou) > 0 {
		sandbox = ou[0]
	}
	tok := s.mint("st", packKey(pub, cert.Subject.CommonName, sandbox), now.Add(serviceTokenLife))
	writeJSON(w, http.StatusOK, map[string]any{"IssueInstant": now.UTC().Format(time.RFC3339Nano),
		"NotAfter": now.Add(serviceTokenLife).UTC().Format(time.RFC3339Nano), "Token": tok, "DisplayClaims": nil})
}

// xstsRequest is an XSTS request, a user's or a service's.
type xstsRequest struct {
	RelyingParty string
	TokenType    string
	Properties   struct {
		UserTokens      []string
		SandboxId       string
		ServiceToken    string
		DelegationToken string
	}
}

// xsts is XSTS: a request with a ServiceToken is a service's
// (serviceXSTS), any other a user's (xstsAuthorize).
func (s *signIn) xsts(w http.ResponseWriter, r *http.Request) {
	body, ok := signedBody(w, r)
	if !ok {
		return
	}
	var req xstsRequest
	if json.Unmarshal(body, &req) == nil && req.Properties.ServiceToken != "" {
		s.serviceXSTS(w, r, &req)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	s.xstsAuthorize(w, r)
}

// serviceXSTS answers a service's XSTS request: the S-token must be this
// mock's and current, the request signed with its proof key, the sandbox
// the certificate's (when it names one) and the delegating user's, and the
// relying party one the world knows. A service-auth answer names no user;
// a delegated one names the user as a user's does.
func (s *signIn) serviceXSTS(w http.ResponseWriter, r *http.Request, req *xstsRequest) {
	now := s.w.now()
	st, ok := s.checkDetail(req.Properties.ServiceToken, "st", now)
	if !ok {
		xstsRefuse(w, st.expired, XErrServiceTokenExpired, XErrServiceTokenInvalid)
		return
	}
	pub, fields, ok := unpackKey(st.xuid, 2)
	if !ok {
		xstsRefuse(w, false, 0, XErrServiceTokenInvalid)
		return
	}
	if !s.verifiedUnder(w, r, xblsign.ProofKeyOf(pub), authPolicy, false) {
		return
	}
	name, certSandbox, sandbox := fields[0], fields[1], req.Properties.SandboxId
	rp, known := s.w.relyingParty(req.RelyingParty)
	switch {
	case req.TokenType != "JWT" || sandbox == "" || len(sandbox) > maxIDBytes:
		writeError(w, http.StatusBadRequest, "BadRequest", "an XSTS request names TokenType JWT and a SandboxId")
		return
	case !known:
		writeJSON(w, http.StatusUnauthorized, map[string]any{"Identity": "0", "XErr": 0,
			"Message": "the relying party is not one this service may get tokens for"})
		return
	case certSandbox != "" && certSandbox != sandbox:
		xstsRefuse(w, false, 0, XErrSandboxDenied)
		return
	}
	exp := now.Add(s2sXTokenLife)
	if req.Properties.DelegationToken == "" {
		tok := s.mint("xs", packKey(pub, name, sandbox, "", rp.Name), exp)
		writeJSON(w, http.StatusOK, map[string]any{"IssueInstant": now.UTC().Format(time.RFC3339Nano),
			"NotAfter": exp.UTC().Format(time.RFC3339Nano), "Token": tok})
		return
	}
	dt, ok := s.checkDetail(req.Properties.DelegationToken, delegationKind, now)
	xuid, dsandbox, _ := strings.Cut(dt.xuid, "\x00")
	switch {
	case !ok:
		// The documentation lists no code of its own for a delegation
		// token; it is the user's token in the exchange.
		xstsRefuse(w, dt.expired, 0x8015DC22, 0x8015DC26)
		return
	case dsandbox != sandbox:
		xstsRefuse(w, false, 0, XErrSandboxDenied)
		return
	}
	if dt.exp.Before(exp) {
		exp = dt.exp
	}
	tok := s.mint("xd", packKey(pub, name, sandbox, xuid, rp.Name), exp)
	writeJSON(w, http.StatusOK, map[string]any{"IssueInstant": now.UTC().Format(time.RFC3339Nano),
		"NotAfter": exp.UTC().Format(time.RFC3339Nano), "Token": tok,
		"DisplayClaims": map[string]any{"xui": []map[string]string{{"gtg": s.w.gamertagOf(xuid), "xid": xuid,
			"uhs": UserHash(xuid), "agg": "Adult", "prv": ""}}}})
}

// delegationKind is a delegation token's kind, no other token's: each
// kind's payload is read only as that kind's.
const delegationKind = "dg"

// delegation returns the DelegationToken claim of a user's XSTS answer for
// relying party rp in sandbox: a token for xuid when the world configures
// rp for delegation, else "". The real claim is inside the token,
// encrypted for the relying party, whose service reads it with its own
// key; the mock's tokens are not encrypted, so it answers the claim among
// the user's display claims (DisplayClaims.xui[0].DelegationToken), where
// a backend's test can take it.
func (s *signIn) delegation(rp, xuid, sandbox string, now time.Time) string {
	if r, ok := s.w.relyingParty(rp); !ok || !r.Delegation || sandbox == "" || len(sandbox) > maxIDBytes {
		return ""
	}
	return s.mint(delegationKind, xuid+"\x00"+sandbox, now.Add(delegationTokenLife))
}

// addDelegation adds the DelegationToken claim (delegation) to a user's
// XSTS answer a (xstsAnswer's) for relying party rp, when it has one.
func (s *signIn) addDelegation(a map[string]any, rp, xuid, sandbox string, now time.Time) {
	dt := s.delegation(rp, xuid, sandbox, now)
	claims, _ := a["DisplayClaims"].(map[string]any)
	xui, _ := claims["xui"].([]map[string]string)
	if dt != "" && len(xui) > 0 {
		xui[0]["DelegationToken"] = dt
	}
}

// xstsRefuse answers 401 with the XErr of an expired or an invalid token.
func xstsRefuse(w http.ResponseWriter, expired bool, xerrExpired, xerr int64) {
	if expired {
		xerr = xerrExpired
	}
	writeJSON(w, http.StatusUnauthorized, map[string]any{"Identity": "0", "XErr": xerr, "Message": ""})
}

// packKey is the payload of a token bound to a proof key: the key's
// coordinates (64 bytes) and then fields, each ended by a null byte.
func packKey(pub *ecdsa.PublicKey, fields ...string) string {
	var b strings.Builder
	point, _ := pub.Bytes() // 0x04 || X || Y: a P-256 key from ProofKey.PublicKey never fails
	b.Write(point[1:])
	for _, f := range fields {
		b.WriteString(f)
		b.WriteByte(0)
	}
	return b.String()
}

// unpackKey reads packKey's payload of n fields.
func unpackKey(p string, n int) (*ecdsa.PublicKey, []string, bool) {
	if len(p) < 64 {
		return nil, nil, false
	}
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append([]byte{4}, p[:64]...))
	fields := strings.Split(p[64:], "\x00")
	if err != nil || len(fields) != n+1 || fields[n] != "" {
		return nil, nil, false
	}
	return pub, fields[:n], true
}

// minted is what checkDetail reads of a token this mock minted.
type minted struct {
	xuid    string    // the payload: a XUID, or a token's fields
	exp     time.Time // when it expires
	expired bool      // it is this mock's, of its kind, but expired
}

// checkDetail reads a token of kind minted by this mock (mint): its
// payload when it is current at now (ok), and whether it has expired.
func (s *signIn) checkDetail(tok, kind string, now time.Time) (t minted, ok bool) {
	i := strings.LastIndexByte(tok, '.')
	if i < 0 || len(tok) > maxMinted {
		return minted{}, false
	}
	payload, sig := tok[:i], tok[i+1:]
	m := hmac.New(sha256.New, s.key[:])
	m.Write([]byte(payload))
	if !hmac.Equal([]byte(base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:16])), []byte(sig)) {
		return minted{}, false
	}
	parts := strings.Split(payload, ".")
	if len(parts) != 3 || parts[0] != kind {
		return minted{}, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	exp, err2 := strconv.ParseInt(parts[2], 10, 64)
	if err != nil || err2 != nil {
		return minted{}, false
	}
	t = minted{xuid: string(raw), exp: time.Unix(exp, 0)}
	if now.Unix() >= exp {
		t.expired = true
		return t, false
	}
	return t, true
}

// maxMinted bounds a token checkDetail reads: a token bound to a proof key
// carries the key, the service's name, the sandbox, a XUID and a relying
// party.
const maxMinted = 1024
