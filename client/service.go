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
	// must present it itself (its TLS configuration's Certificates).
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
	users   map[string]*delegation // by XUID
}

// delegation is a user the service acts for: their delegation token and
// the X-token it got.
type delegation struct {
	token string
	slot  tokenSlot
}

// tokenSlot is one cached token and its renewal; the ServiceSignIn's mu
// guards it.
type tokenSlot struct {
	tok     XboxToken
	renew   time.Time // due for renewal, local clock
	expires time.Time // local clock
	flying  *flight
	err     error     // the last renewal's failure
	fails   int       // renewals failed in a row
	retryAt time.Time // no renewal before, after a failure
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
		x, err = s.delegated(ctx, xuid)
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
	return s.get(ctx, &s.service, func(ctx context.Context) (XboxToken, *xboxAuth, error) {
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
// users.
func (s *ServiceSignIn) SetDelegation(xuid, delegationToken string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d, ok := s.users[xuid]; ok && d.token == delegationToken {
		return nil
	}
	if _, ok := s.users[xuid]; !ok && len(s.users) >= MaxDelegations {
		return fmt.Errorf("client: already acting for %d users; Forget some first", MaxDelegations)
	}
	if s.users == nil {
		s.users = map[string]*delegation{}
	}
	s.users[xuid] = &delegation{token: delegationToken}
	return nil
}

// Forget stops acting for xuid and drops their tokens, as the
// documentation asks of delegation tokens no longer needed.
func (s *ServiceSignIn) Forget(xuid string) {
	s.mu.Lock()
	delete(s.users, xuid)
	s.mu.Unlock()
}

// delegated returns the X-token acting for xuid.
func (s *ServiceSignIn) delegated(ctx context.Context, xuid string) (XboxToken, error) {
	s.mu.Lock()
	d, ok := s.users[xuid]
	s.mu.Unlock()
	if !ok {
		return XboxToken{}, fmt.Errorf("%w: the service acts for no user %s (SetDelegation)", ErrNoToken, safetext.Clip(xuid, 40))
	}
	return s.get(ctx, &d.slot, func(ctx context.Context) (XboxToken, *xboxAuth, error) {
		a, err := s.xsts(ctx, d.token)
		if err != nil {
			return XboxToken{}, nil, err
		}
		x, err := xstsToken(a)
		if err != nil {
			return XboxToken{}, nil, err
		}
		return *x, a, nil
	})
}

// serviceToken returns the S-token.
func (s *ServiceSignIn) serviceToken(ctx context.Context) (XboxToken, error) {
	return s.get(ctx, &s.sToken, func(ctx context.Context) (XboxToken, *xboxAuth, error) {
		key, hc := s.keyAndClient()
		body := map[string]any{"RelyingParty": "http://auth.xboxlive.com", "TokenType": "JWT",
			"Properties": map[string]any{"ProofKey": xblsign.ProofKeyOf(&key.PublicKey)}}
		a, err := postAuth(ctx, hc, "XSAS S-token", ServiceAuthURL, body, key)
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
			map[string]any{"RelyingParty": cmp.Or(s.RelyingParty, XboxRelyingParty), "TokenType": "JWT", "Properties": props}, key)
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
// documentation describes. slot is read and written under s.mu.
func (s *ServiceSignIn) get(ctx context.Context, slot *tokenSlot, fetch func(context.Context) (XboxToken, *xboxAuth, error)) (XboxToken, error) {
	s.keyAndClient() // the key exists before any token is bound to it
	s.mu.Lock()
	now := time.Now()
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
		f = s.renewLocked(ctx, slot, fetch)
	}
	s.mu.Unlock()
	if valid {
		return tok, nil // the renewal goes on in the background
	}
	return f.wait(ctx)
}

// renewLocked starts a renewal of slot. It keeps ctx's values but not its
// cancellation (others may wait for it); Timeout bounds it. Requires s.mu
// held.
func (s *ServiceSignIn) renewLocked(ctx context.Context, slot *tokenSlot, fetch func(context.Context) (XboxToken, *xboxAuth, error)) *flight {
	f := &flight{done: make(chan struct{})}
	slot.flying = f
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cmp.Or(s.Timeout, DefaultSignInTimeout))
	go func() {
		defer cancel()
		tok, a, err := fetch(ctx)
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
