package client

import (
	"cmp"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/internal/xblauth"
	"github.com/xblgo/fgrl/internal/xblid"
	"github.com/xblgo/fgrl/internal/xblsign"
)

// ServiceAuthURL is the Xbox Service Authentication Service (XSAS), where a
// title's service signs in with its Business Partner Certificate ("Title
// service calls to Xbox services", GDK documentation).
const ServiceAuthURL = "https://service.auth.xboxlive.com/service/authenticate"

// XErr codes of XSTS refusals of a service's S-token ("Title service calls
// to Xbox services", Delegated Auth Error handling): a sign-in that meets
// one gets a new S-token and asks again, once.
const (
	XErrServiceTokenExpired = 0x8015DC1F
	XErrServiceTokenInvalid = 0x8015DC27
)

// MaxDelegations bounds the users a ServiceSignIn acts for at once
// (SetDelegation): each holds its delegation token and X-token, about 2
// KiB.
const MaxDelegations = 100_000

// ServiceSignIn is a TokenSource for a title's service, as a game backend
// signs in: its Business Partner Certificate, presented as the client TLS
// certificate, gets an S-token from XSAS for its proof key (two weeks), and
// XSTS exchanges the S-token for X-tokens: the service's own (service
// auth: Token with xuid "", "XBL3.0 x=-;<token>", which only multiplayer,
// string verification and deleted accounts take), and one per user it acts
// for with the user's delegation token (delegated auth: Token with the
// user's XUID). Every request made with them is signed with the proof key
// (Token.Key), which never leaves the process.
//
// Each token is renewed Margin before it expires (at most half its
// lifetime), judged by its own lifetime counted on the local clock from
// when it arrived, so a local clock that disagrees with the services' does
// not matter. One renewal of each token runs at a time (single flight),
// bounded by Timeout; while a token is still valid its callers keep it and
// do not wait for its renewal. A renewal that fails is not retried for a
// second, doubling to a minute while failures follow each other: callers
// in that time get the failure (or the still valid token) at once, so a
// flood of calls makes no flood of sign-ins.
//
// It is safe for concurrent use; its fields must not change after the
// first call.
type ServiceSignIn struct {
	// Certificate is the Business Partner Certificate and its private key
	// (tls.LoadX509KeyPair, LoadPartnerCertificate).
	Certificate tls.Certificate
	// Sandbox is the sandbox of the X-tokens; empty means "RETAIL". A
	// certificate issued for one sandbox works in that one only.
	Sandbox string
	// RelyingParty is the X-tokens' relying party; empty means
	// XboxRelyingParty.
	RelyingParty string
	// HTTPClient sends the sign-in requests. Nil means a client that
	// presents Certificate, on http.DefaultTransport's settings; one given
	// must present it itself (its TLS configuration's Certificates). No
	// redirect is followed: a 3xx is a failure.
	HTTPClient *http.Client
	// ProofKey is the key the tokens are bound to and requests signed
	// with; nil means a fresh ECDSA P-256 key, made at the first sign-in
	// and kept for the ServiceSignIn's life.
	ProofKey *ecdsa.PrivateKey
	// Margin is how long before expiry a token is renewed; 0 means 5
	// minutes.
	Margin time.Duration
	// Timeout bounds one renewal, all its round trips together; 0 means
	// DefaultSignInTimeout.
	Timeout time.Duration

	mu      sync.Mutex
	hc      *http.Client
	key     *ecdsa.PrivateKey
	sToken  tokenSlot
	service tokenSlot
	users   map[string]*delegation     // by XUID
	byHash  map[string]map[string]bool // a delegated X-token's userhash to the XUIDs of the users given it, for RefreshToken
}

// delegation is a user the service acts for: their delegation token and
// the X-token it got.
type delegation struct {
	token string
	slot  tokenSlot
	uhs   string          // the userhash its X-tokens carry, once one came (its byHash key)
	old   xblauth.Secrets // the tokens of the delegation it replaced (SetDelegation): calls under way may carry them
}

// tokenSlot is one cached token and its renewal; the ServiceSignIn's mu
// guards it.
type tokenSlot struct {
	tok     XboxToken
	dropped string    // the Authorization of the token last dropped as refused: a 401 of it renews this slot
	renew   time.Time // due for renewal, local clock
	expires time.Time // local clock
	flying  *flight
	err     error          // the last renewal's failure
	fails   int            // renewals failed in a row
	retryAt time.Time      // no renewal before, after a failure
	forced  forcedRenewals // renewals forced by 401s (RefreshToken)
}

// Token returns the service's Authorization for xuid "" (service auth),
// or the one acting for xuid (delegated auth, SetDelegation), as a
// Client's TokenSource: its Key signs the requests.
func (s *ServiceSignIn) Token(ctx context.Context, xuid string) (Token, error) {
	var (
		x   XboxToken
		err error
	)
	if xuid == "" {
		x, err = s.ServiceToken(ctx)
	} else {
		x, err = s.delegated(ctx, xuid, "")
	}
	if err != nil {
		return Token{}, err
	}
	s.mu.Lock()
	key := s.key
	s.mu.Unlock()
	return Token{Authorization: x.Authorization(), Key: key}, nil
}

// ServiceToken returns the service-auth X-token: the service's own
// identity, its UserHash "-".
func (s *ServiceSignIn) ServiceToken(ctx context.Context) (XboxToken, error) {
	return s.serviceX(ctx, "")
}

// serviceX returns the service-auth X-token, renewing it first if it is
// stale (get).
func (s *ServiceSignIn) serviceX(ctx context.Context, stale string) (XboxToken, error) {
	return s.get(ctx, &s.service, stale, func(ctx context.Context) (XboxToken, *xboxAuth, error) {
		a, err := s.xsts(ctx, "")
		if err != nil {
			return XboxToken{}, nil, err
		}
		return XboxToken{UserHash: "-", Token: a.Token, NotAfter: a.NotAfter}, a, nil
	})
}

// SetDelegation makes the service act for xuid with the user's delegation
// token (XboxToken.DelegationToken of the user's token for the service's
// relying party), replacing the one it had. It fails past MaxDelegations
// users, and for an xuid that is not a XUID (xblid: decimal, no leading
// zero; "" names the service itself in Token). A token that is not xuid's
// (XSTS's answer names another XUID, or none) gives no X-token:
// Token(ctx, xuid) fails with ErrNoToken.
func (s *ServiceSignIn) SetDelegation(xuid, delegationToken string) error {
	if err := xblid.CheckXUID(xuid); err != nil {
		return fmt.Errorf("client: SetDelegation: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if d, ok := s.users[xuid]; ok && d.token == delegationToken {
		return nil
	}
	old, ok := s.users[xuid]
	if !ok && len(s.users) >= MaxDelegations {
		return fmt.Errorf("client: already acting for %d users; Forget some first", MaxDelegations)
	}
	if s.users == nil {
		s.users = map[string]*delegation{}
	}
	d := &delegation{token: delegationToken}
	if ok {
		d.uhs = old.uhs // its byHash key, until a token of the new one comes
		// The old delegation's tokens are still carried by calls under way
		// (and a renewal of the old may still be running): known secrets
		// until the new one's first renewal.
		d.old = old.slot.secrets(xblauth.Secrets{}.Add(old.token))
	}
	s.users[xuid] = d
	return nil
}

// Forget stops acting for xuid and drops their tokens, as the
// documentation asks of delegation tokens no longer needed.
func (s *ServiceSignIn) Forget(xuid string) {
	s.mu.Lock()
	if d, ok := s.users[xuid]; ok {
		s.hashLocked(xuid, d.uhs, "") // by the userhash kept, as a renewal under way has emptied its slot
	}
	delete(s.users, xuid)
	s.mu.Unlock()
}

// hashLocked moves xuid in byHash from userhash old to userhash new ("":
// none). Requires s.mu held.
func (s *ServiceSignIn) hashLocked(xuid, old, new string) {
	if users := s.byHash[old]; users != nil {
		delete(users, xuid)
		if len(users) == 0 {
			delete(s.byHash, old)
		}
	}
	if new == "" {
		return
	}
	if s.byHash == nil {
		s.byHash = map[string]map[string]bool{}
	}
	if s.byHash[new] == nil {
		s.byHash[new] = map[string]bool{}
	}
	s.byHash[new][xuid] = true
}

// userOfLocked returns whose delegated X-token stale is: among the users
// given its userhash uhs (XSTS need not make userhashes unique), the one
// whose token it is, or was until a 401 of it dropped it; else false, as
// renewing another user's token (one forgotten meanwhile: Forget) would
// send the call as them. Requires s.mu held.
func (s *ServiceSignIn) userOfLocked(uhs, stale string) (string, bool) {
	for xuid := range s.byHash[uhs] {
		if d := s.users[xuid]; d != nil && (d.slot.tok.Authorization() == stale || d.slot.dropped == stale) {
			return xuid, true
		}
	}
	return "", false
}

// RefreshToken renews the X-token a request was refused with (its
// Authorization header), the service's own or a user's, as XSAPI does
// after a 401: it has the signature of transport.Transport's
// RefreshToken, which retries the call once with what it returns (New
// sets it on the transport it makes). Requests refused with the same
// token share one renewal, and a token that has already replaced it is
// returned at once. Renewals forced this way wait 1 s, doubling to a
// minute, ±20 %, while they follow each other within two minutes, as XSTS
// is rate limited too (forcedRenewals, as SignIn.Renew).
func (s *ServiceSignIn) RefreshToken(req *http.Request) (string, error) {
	stale := req.Header.Get("Authorization")
	uhs, _, err := xblauth.Parse(stale)
	if err != nil {
		return "", fmt.Errorf("%w: the refused request carries no XBL3.0 token", ErrNoToken)
	}
	var x XboxToken
	if uhs == "-" {
		x, err = s.serviceX(req.Context(), stale)
	} else {
		s.mu.Lock()
		xuid, known := s.userOfLocked(uhs, stale)
		s.mu.Unlock()
		if !known {
			return "", fmt.Errorf("%w: the service acts for no one user of userhash %s with this token", ErrNoToken, safetext.Clip(uhs, 40))
		}
		x, err = s.delegated(req.Context(), xuid, stale)
	}
	if err != nil {
		return "", err
	}
	return x.Authorization(), nil
}

// delegated returns the X-token acting for xuid, renewing it first if it
// is stale (get).
func (s *ServiceSignIn) delegated(ctx context.Context, xuid, stale string) (XboxToken, error) {
	s.mu.Lock()
	d, ok := s.users[xuid]
	s.mu.Unlock()
	if !ok {
		return XboxToken{}, fmt.Errorf("%w: the service acts for no user %s (SetDelegation)", ErrNoToken, safetext.Clip(xuid, 40))
	}
	return s.get(ctx, &d.slot, stale, func(ctx context.Context) (XboxToken, *xboxAuth, error) {
		a, err := s.xsts(ctx, d.token)
		if err != nil {
			return XboxToken{}, nil, err
		}
		x, err := xstsToken(a)
		if err != nil {
			return XboxToken{}, nil, err
		}
		if x.XUID != xuid {
			// A game client may send another user's delegation token:
			// the X-token would act for that user under xuid's name. An
			// answer that names no user cannot say it is xuid's.
			return XboxToken{}, nil, fmt.Errorf("%w: the delegation token given for user %s is user %q's (XSTS's answer, xui[0].xid)", ErrNoToken, safetext.Clip(xuid, 40), safetext.Clip(x.XUID, 40))
		}
		s.mu.Lock()
		if s.users[xuid] == d {
			s.hashLocked(xuid, d.uhs, x.UserHash)
			d.uhs = x.UserHash
		}
		s.mu.Unlock()
		return *x, a, nil
	})
}

// serviceToken returns the S-token.
func (s *ServiceSignIn) serviceToken(ctx context.Context) (XboxToken, error) {
	return s.get(ctx, &s.sToken, "", func(ctx context.Context) (XboxToken, *xboxAuth, error) {
		key, hc := s.keyAndClient()
		body := map[string]any{"RelyingParty": "http://auth.xboxlive.com", "TokenType": "JWT",
			"Properties": map[string]any{"ProofKey": xblsign.ProofKeyOf(&key.PublicKey)}}
		a, err := postAuth(ctx, hc, "XSAS S-token", ServiceAuthURL, body, key, s.knownSecrets)
		if err != nil {
			return XboxToken{}, nil, err
		}
		return XboxToken{Token: a.Token, NotAfter: a.NotAfter}, a, nil
	})
}

// xsts asks XSTS for an X-token with the S-token, on behalf of the user
// of delegationToken when it is set. An S-token XSTS calls expired or
// invalid is dropped and the request made once more with a new one.
func (s *ServiceSignIn) xsts(ctx context.Context, delegationToken string) (*xboxAuth, error) {
	for try := 0; ; try++ {
		st, err := s.serviceToken(ctx)
		if err != nil {
			return nil, err
		}
		props := map[string]any{"ServiceToken": st.Token, "SandboxId": cmp.Or(s.Sandbox, "RETAIL")}
		if delegationToken != "" {
			props["DelegationToken"] = delegationToken
		}
		key, hc := s.keyAndClient()
		a, err := postAuth(ctx, hc, "XSTS token", XSTSURL,
			map[string]any{"RelyingParty": cmp.Or(s.RelyingParty, XboxRelyingParty), "TokenType": "JWT", "Properties": props}, key, s.knownSecrets)
		var se *SignInError
		if try == 0 && errors.As(err, &se) && (se.XErr == XErrServiceTokenExpired || se.XErr == XErrServiceTokenInvalid) {
			s.mu.Lock()
			if s.sToken.tok.Token == st.Token {
				s.sToken.tok, s.sToken.expires = XboxToken{}, time.Time{}
			}
			s.mu.Unlock()
			continue
		}
		return a, err
	}
}

// knownSecrets returns every credential the ServiceSignIn holds: the
// S-token, the service's X-token, and each user's delegation token and
// X-token (and the tokens a 401 dropped), which no step's refusal may quote (XSAS and XSTS may share what
// each was sent; one user's refusal may quote another's).
func (s *ServiceSignIn) knownSecrets() xblauth.Secrets {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss := s.sToken.secrets(nil)
	ss = s.service.secrets(ss)
	for _, d := range s.users {
		ss = d.slot.secrets(append(ss.Add(d.token), d.old...))
	}
	return ss
}

// secrets returns ss with the slot's token and the one a 401 last dropped
// (calls under way still carry it).
func (t *tokenSlot) secrets(ss xblauth.Secrets) xblauth.Secrets {
	ss = ss.Add(t.tok.Token)
	if _, tok, err := xblauth.Parse(t.dropped); err == nil {
		ss = ss.Add(tok)
	}
	return ss
}

// keyAndClient returns the proof key and the HTTP client, making them at
// the first call.
func (s *ServiceSignIn) keyAndClient() (*ecdsa.PrivateKey, *http.Client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.key == nil {
		s.key = s.ProofKey
		if s.key == nil {
			s.key, _ = ecdsa.GenerateKey(elliptic.P256(), rand.Reader) // never fails for P-256
		}
	}
	if s.hc == nil {
		s.hc = s.HTTPClient
		if s.hc == nil {
			tr := http.DefaultTransport.(*http.Transport).Clone()
			tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{s.Certificate}}
			s.hc = &http.Client{Transport: tr}
		}
	}
	return s.key, s.hc
}

// get returns slot's token, renewing it with fetch as the type's
// documentation describes. A stale token (the Authorization a call was
// refused with; "" for none) still in the slot is dropped and renewed
// (RefreshToken). slot is read and written under s.mu.
func (s *ServiceSignIn) get(ctx context.Context, slot *tokenSlot, stale string, fetch func(context.Context) (XboxToken, *xboxAuth, error)) (XboxToken, error) {
	s.keyAndClient() // the key exists before any token is bound to it
	s.mu.Lock()
	now := time.Now()
	if stale != "" && slot.tok.Token != "" && slot.tok.Authorization() == stale {
		if slot.flying == nil {
			s.renewLocked(ctx, slot, max(slot.forced.wait(now), slot.retryAt.Sub(now)), fetch)
		}
		slot.tok, slot.expires = XboxToken{}, time.Time{} // its callers wait for the renewal
		slot.dropped = stale
	}
	tok, valid := slot.tok, slot.tok.Token != "" && now.Before(slot.expires)
	if valid && now.Before(slot.renew) {
		s.mu.Unlock()
		return tok, nil
	}
	f := slot.flying
	if f == nil && now.Before(slot.retryAt) {
		err := slot.err
		s.mu.Unlock()
		if valid {
			return tok, nil
		}
		return XboxToken{}, err
	}
	if f == nil {
		f = s.renewLocked(ctx, slot, 0, fetch)
	}
	s.mu.Unlock()
	if valid {
		return tok, nil // the renewal goes on in the background
	}
	return f.wait(ctx)
}

// renewLocked starts a renewal of slot, after wait. It keeps ctx's values
// but not its cancellation (others may wait for it); wait and Timeout
// bound it. Requires s.mu held.
func (s *ServiceSignIn) renewLocked(ctx context.Context, slot *tokenSlot, wait time.Duration, fetch func(context.Context) (XboxToken, *xboxAuth, error)) *flight {
	f := &flight{done: make(chan struct{})}
	slot.flying = f
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), wait+cmp.Or(s.Timeout, DefaultSignInTimeout))
	go func() {
		defer cancel()
		tok, a, err := fetchAfter(ctx, wait, fetch)
		now := time.Now()
		s.mu.Lock()
		slot.flying = nil
		if err != nil {
			slot.err, slot.fails = err, slot.fails+1
			slot.retryAt = now.Add(min(time.Second<<min(slot.fails-1, 6), renewMaxWait))
		} else {
			slot.tok, slot.err, slot.fails, slot.retryAt = tok, nil, 0, time.Time{}
			slot.renew, slot.expires = renewAt(a, now, s.Margin), now.Add(lifeOf(a, now))
		}
		s.mu.Unlock()
		f.tok, f.err = tok, err
		close(f.done)
	}()
	return f
}

// fetchAfter calls fetch once wait has passed, or returns ctx's error
// first.
func fetchAfter(ctx context.Context, wait time.Duration, fetch func(context.Context) (XboxToken, *xboxAuth, error)) (XboxToken, *xboxAuth, error) {
	if wait > 0 && !sleep(ctx, wait) {
		return XboxToken{}, nil, ended("XSTS token", ctx.Err())
	}
	return fetch(ctx)
}
