package client

import (
	"bytes"
	"cmp"
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v4"
	"golang.org/x/oauth2"

	"github.com/xblgo/fgrl/hresult"
	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/internal/xblauth"
	"github.com/xblgo/fgrl/internal/xblsign"
)

// The public sign-in endpoints (OpenXbox/xbox-webapi-python,
// xbox/webapi/authentication/manager.py; the Microsoft identity platform's
// device code flow for consumer accounts).
const (
	MicrosoftDeviceCodeURL = "https://login.microsoftonline.com/consumers/oauth2/v2.0/devicecode"
	MicrosoftTokenURL      = "https://login.microsoftonline.com/consumers/oauth2/v2.0/token"
	MicrosoftAuthURL       = "https://login.microsoftonline.com/consumers/oauth2/v2.0/authorize"
	UserAuthURL            = "https://user.auth.xboxlive.com/user/authenticate"
	XSTSURL                = "https://xsts.auth.xboxlive.com/xsts/authorize"
	// XboxRelyingParty is the relying party of the tokens Xbox services
	// take; a title's own services have their own.
	XboxRelyingParty = "http://xboxlive.com"
)

// SignInScopes are the Microsoft account scopes Xbox sign-in asks for.
var SignInScopes = []string{"XboxLive.signin", "offline_access"}

// MicrosoftOAuth returns the OAuth 2.0 configuration of a Microsoft account
// sign-in for the application clientID (registered in the Azure portal as
// a public client for personal Microsoft accounts; see README).
func MicrosoftOAuth(clientID string) *oauth2.Config {
	return &oauth2.Config{
		ClientID: clientID,
		Scopes:   SignInScopes,
		Endpoint: oauth2.Endpoint{AuthURL: MicrosoftAuthURL, TokenURL: MicrosoftTokenURL,
			DeviceAuthURL: MicrosoftDeviceCodeURL, AuthStyle: oauth2.AuthStyleInParams},
	}
}

// XboxToken is an XSTS token and who it is for. It prints (fmt, log/slog)
// with its tokens "[redacted]" (tokenfmt.go); its JSON, which xblcall
// stores, is whole, and fmt's report of a wrong verb, and encoders and
// printers that read fields by reflection (encoding/gob, go-cmp's Diff) see
// them as they are.
type XboxToken struct {
	UserHash string    `json:"uhs"`
	XUID     string    `json:"xid"`
	Gamertag string    `json:"gtg"`
	Token    string    `json:"token"`
	NotAfter time.Time `json:"notAfter"`
	// DelegationToken is the user's DelegationToken claim, given with a
	// token for a title service's relying party configured for delegation:
	// the service's ServiceSignIn acts for the user with it (SetDelegation).
	// The mock gives it among the display claims; a real title service
	// reads it from the token, decrypted with its relying party's key.
	DelegationToken string `json:"dlg,omitempty"`
}

// Authorization returns the header value services take:
// "XBL3.0 x=<userhash>;<token>".
func (t XboxToken) Authorization() string { return "XBL3.0 x=" + t.UserHash + ";" + t.Token }

// SignIn is a TokenSource for one signed-in user: from a Microsoft account
// refresh token it gets an access token, a user token from
// user.auth.xboxlive.com and an XSTS token from xsts.auth.xboxlive.com, and
// gets new ones before they expire. It is safe for concurrent use.
//
// One sign-in runs at a time (single flight), bounded by Timeout whatever the
// callers' contexts; callers waiting for it leave when their own context
// ends. Freshness is judged by each token's own lifetime (NotAfter minus
// IssueInstant) counted on the local clock from when it arrived, so a local
// clock that runs ahead of the services' does not make every call sign in
// again.
type SignIn struct {
	// OAuth is the Microsoft account configuration (MicrosoftOAuth). A
	// refresh posts its ClientID, its ClientSecret if any, and its Scopes
	// (SignInScopes if none: the identity platform requires a scope) to its
	// Endpoint.TokenURL.
	OAuth *oauth2.Config
	// Microsoft is the Microsoft account token to start from: a stored
	// refresh token, with or without a still valid access token. It is read
	// at the first sign-in; MicrosoftToken returns the token as refreshed
	// since.
	Microsoft *oauth2.Token
	// HTTPClient sends every sign-in request; nil means
	// http.DefaultClient. Timeout bounds each sign-in either way, and no
	// redirect is followed: a 3xx is a failure.
	HTTPClient *http.Client
	// RelyingParty is the XSTS relying party; empty means
	// XboxRelyingParty.
	RelyingParty string
	// Sandbox is the XSTS sandbox; empty means "RETAIL".
	Sandbox string
	// Margin is how long before expiry a token is renewed; 0 means 5
	// minutes. It is at most half the token's lifetime.
	Margin time.Duration
	// Timeout bounds one sign-in, all its round trips together; 0 means
	// DefaultSignInTimeout.
	Timeout time.Duration
	// OnRefresh, when set, is called with the Microsoft account token each
	// time it changes (a refresh rotates the refresh token), so that the
	// caller can store it.
	OnRefresh func(*oauth2.Token)

	mu        sync.Mutex
	ms        *oauth2.Token // Microsoft, then as refreshed
	started   bool          // ms has been taken from Microsoft
	user      *xboxAuth
	userRenew time.Time // when the user token is due for renewal, local clock
	xsts      *XboxToken
	xstsRenew time.Time      // likewise the XSTS token
	flying    *flight        // the sign-in under way
	forced    forcedRenewals // sign-ins forced by 401s
	// dropped are the user and XSTS tokens (and delegation tokens) 401s
	// dropped (Renew), the newest first, at most maxDropped: calls under
	// way still carry them, so a step's refusal must not quote them
	// (knownSecrets).
	dropped xblauth.Secrets
}

// flight is one sign-in under way; done is closed when it has ended.
type flight struct {
	done chan struct{}
	tok  XboxToken
	err  error
}

// DefaultSignInTimeout bounds one sign-in (the Microsoft token refresh, the
// user token and the XSTS token together) when SignIn.Timeout is zero.
const DefaultSignInTimeout = 30 * time.Second

// Token returns the signed-in user's Authorization when xuid is theirs (or
// empty), as a Client's TokenSource.
func (s *SignIn) Token(ctx context.Context, xuid string) (Token, error) {
	t, err := s.XboxToken(ctx)
	if err != nil {
		return Token{}, err
	}
	if xuid != "" && xuid != t.XUID {
		return Token{}, fmt.Errorf("%w: signed in as %s, not %s", ErrNoToken, safetext.Clip(t.XUID, 40), safetext.Clip(xuid, 40))
	}
	return Token{Authorization: t.Authorization()}, nil
}

// XboxToken returns the XSTS token, renewing what has expired or will
// within Margin. It returns a SignInError wrapping ctx's error when ctx
// ends first; the sign-in under way goes on for the other callers.
func (s *SignIn) XboxToken(ctx context.Context) (XboxToken, error) {
	s.mu.Lock()
	if s.xsts != nil && time.Now().Before(s.xstsRenew) {
		x := *s.xsts
		s.mu.Unlock()
		return x, nil
	}
	f := s.startLocked(ctx, 0)
	s.mu.Unlock()
	return f.wait(ctx)
}

// Renew gets a new XSTS token after a service refused stale (the
// Authorization value that got the 401). Calls refused with the same stale
// token share one sign-in: a sign-in under way is joined, and a token that
// has already replaced stale is returned at once. Sign-ins forced this way
// back off exponentially (1 s doubling to 1 minute) while they follow each
// other closely, as XSTS is rate limited too.
func (s *SignIn) Renew(ctx context.Context, stale string) (XboxToken, error) {
	s.mu.Lock()
	if s.flying == nil && s.xsts != nil && s.xsts.Authorization() != stale {
		x := *s.xsts
		s.mu.Unlock()
		return x, nil
	}
	var wait time.Duration
	if s.flying == nil {
		wait = s.forced.wait(time.Now())
		s.dropped = lastSecrets(append(s.heldLocked(), s.dropped...))
		s.user, s.xsts = nil, nil
	}
	f := s.startLocked(ctx, wait)
	s.mu.Unlock()
	return f.wait(ctx)
}

// renewMaxWait caps the backoff between sign-ins forced by 401s.
const renewMaxWait = time.Minute

// forcedRenewals paces the renewals of one token that 401s force
// (SignIn.Renew, ServiceSignIn's RefreshToken): the first in a while goes
// at once; while they follow each other within 2*renewMaxWait, each waits
// 1 s doubling to renewMaxWait, ±20 %, as XSTS is rate limited too. Its
// owner's mutex guards it.
type forcedRenewals struct {
	next time.Time // when the last forced renewal may start
	bo   backoff.ExponentialBackOff
}

// wait returns how long a renewal forced at now waits.
func (f *forcedRenewals) wait(now time.Time) time.Duration {
	var wait time.Duration
	if f.next.IsZero() || now.Sub(f.next) > 2*renewMaxWait {
		f.bo = backoff.ExponentialBackOff{InitialInterval: time.Second, RandomizationFactor: 0.2,
			Multiplier: 2, MaxInterval: renewMaxWait, Stop: backoff.Stop, Clock: backoff.SystemClock}
		f.bo.Reset()
	} else {
		wait = f.bo.NextBackOff()
	}
	f.next = now.Add(wait)
	return wait
}

// RefreshToken renews the token a request was refused with (its
// Authorization header): the signature of transport.Transport's
// RefreshToken, so that a 401 signs in again once per wave of refusals. A
// request without an XBL3.0 token, or a renewal that names another user
// (another userhash), is ErrNoToken: the call is not sent again.
func (s *SignIn) RefreshToken(req *http.Request) (string, error) {
	stale := req.Header.Get("Authorization")
	was, _, err := xblauth.Parse(stale)
	if err != nil {
		return "", fmt.Errorf("%w: the refused request carries no XBL3.0 token", ErrNoToken)
	}
	x, err := s.Renew(req.Context(), stale)
	if err != nil {
		return "", err
	}
	// A renewal that signed another user in (the Microsoft account's
	// refresh, a confused XSTS) is no token for the refused call, which
	// asked for the first user's view.
	if now, _, _ := xblauth.Parse(x.Authorization()); now != was {
		return "", fmt.Errorf("%w: the renewed token is another user's (userhash %s, not %s)", ErrNoToken,
			safetext.Clip(now, 40), safetext.Clip(was, 40))
	}
	return x.Authorization(), nil
}

// Invalidate drops the cached user and XSTS tokens, so the next call signs
// in again.
func (s *SignIn) Invalidate() {
	s.mu.Lock()
	s.user, s.xsts = nil, nil
	s.mu.Unlock()
}

// MicrosoftToken returns the Microsoft account token as last refreshed.
func (s *SignIn) MicrosoftToken() *oauth2.Token {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.msLocked()
}

// msLocked returns the Microsoft account token, Microsoft until the first
// refresh. Requires s.mu held.
func (s *SignIn) msLocked() *oauth2.Token {
	if !s.started {
		s.ms, s.started = s.Microsoft, true
	}
	return s.ms
}

// startLocked returns the sign-in under way, or starts one after wait. The
// sign-in keeps ctx's values but not its cancellation: other callers may be
// waiting for it. Timeout bounds it. s.mu is held.
func (s *SignIn) startLocked(ctx context.Context, wait time.Duration) *flight {
	if s.flying != nil {
		return s.flying
	}
	f := &flight{done: make(chan struct{})}
	s.flying = f
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), wait+cmp.Or(s.Timeout, DefaultSignInTimeout))
	go func() {
		defer cancel()
		f.tok, f.err = s.signIn(ctx, wait)
		s.mu.Lock()
		s.flying = nil
		s.mu.Unlock()
		close(f.done)
	}()
	return f
}

// wait returns the flight's token when it lands, or ctx's error first (an
// XSTS token is what every caller waits for in the end).
func (f *flight) wait(ctx context.Context) (XboxToken, error) {
	select {
	case <-f.done:
		return f.tok, f.err
	case <-ctx.Done():
		return XboxToken{}, ended("XSTS token", ctx.Err())
	}
}

// ended is the SignInError of a sign-in that err, a context's error, ended
// at step: errors.Is finds context.DeadlineExceeded or context.Canceled
// through it.
func ended(step string, err error) *SignInError { return failed(step, 0, err, nil) }

// failed is the SignInError of a request of step that failed with err (a
// deadline, a network error), after an answer of status if one came: err
// is its cause, scrubbed of the secrets ss names.
func failed(step string, status int, err error, ss xblauth.Secrets) *SignInError {
	err = ss.ScrubError(err)
	return &SignInError{Step: step, Status: status, Message: safetext.Clip(err.Error(), 200), Err: err}
}

// signIn gets, after wait, what is due of the user and XSTS tokens.
func (s *SignIn) signIn(ctx context.Context, wait time.Duration) (XboxToken, error) {
	if wait > 0 && !sleep(ctx, wait) {
		return XboxToken{}, ended("XSTS token", ctx.Err())
	}
	s.mu.Lock()
	user, userRenew := s.user, s.userRenew
	s.mu.Unlock()
	if user == nil || !time.Now().Before(userRenew) {
		access, err := s.accessToken(ctx)
		if err != nil {
			return XboxToken{}, err
		}
		if user, err = s.post(ctx, "Xbox user token", UserAuthURL, userTokenRequest(access), s.knownSecrets); err != nil {
			return XboxToken{}, err
		}
		userRenew = s.renewAt(user, time.Now())
	}
	// The refusal of one step may quote another's secret (one operator's
	// hosts may share what each was sent): each step's error is scrubbed
	// of every credential the sign-in holds (knownSecrets).
	a, err := s.post(ctx, "XSTS token", XSTSURL, s.xstsRequest(user.Token), s.knownSecrets)
	if err != nil {
		return XboxToken{}, err
	}
	x, err := xstsToken(a)
	if err != nil {
		return XboxToken{}, err
	}
	s.mu.Lock()
	s.user, s.userRenew, s.xsts, s.xstsRenew = user, userRenew, x, s.renewAt(a, time.Now())
	s.mu.Unlock()
	return *x, nil
}

// renewAt returns when a token that arrived at received is due for renewal:
// Margin (at most half its lifetime) before it expires. The lifetime is the
// token's own (NotAfter minus IssueInstant), so the services' clock and the
// local one need not agree; a token without IssueInstant is judged by
// NotAfter on the local clock.
func (s *SignIn) renewAt(a *xboxAuth, received time.Time) time.Time {
	return renewAt(a, received, s.Margin)
}

// renewAt is when a token that arrived at received is due for renewal,
// margin (0: 5 minutes; at most half its lifetime) before it expires
// (SignIn.renewAt), and when it expires, both on the local clock.
func renewAt(a *xboxAuth, received time.Time, margin time.Duration) time.Time {
	life := lifeOf(a, received)
	return received.Add(life - min(cmp.Or(margin, 5*time.Minute), life/2))
}

// lifeOf is a token's lifetime: its own (NotAfter minus IssueInstant), or
// for one without IssueInstant what is left of it at received.
func lifeOf(a *xboxAuth, received time.Time) time.Duration {
	if a.IssueInstant.IsZero() {
		return a.NotAfter.Sub(received)
	}
	return a.NotAfter.Sub(a.IssueInstant)
}

// signInClient returns a copy of hc (nil: http.DefaultClient) that follows
// no redirect, so that a 3xx is the answer: a sign-in request carries a
// token, which a 307 or 308 would post again to wherever it points. hc is
// not changed.
func signInClient(hc *http.Client) *http.Client {
	c := *cmp.Or(hc, http.DefaultClient)
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &c
}

// accessToken returns a valid Microsoft access token, refreshing it with
// the refresh token when needed (tokenGrant), within ctx.
func (s *SignIn) accessToken(ctx context.Context) (string, error) {
	s.mu.Lock()
	ms := s.msLocked()
	s.mu.Unlock()
	if ms == nil {
		return "", &SignInError{Step: "Microsoft account", Message: "not signed in (no Microsoft account token)"}
	}
	if ms.Valid() {
		return ms.AccessToken, nil
	}
	if ms.RefreshToken == "" {
		return "", &SignInError{Step: "Microsoft account", Message: "the access token has expired, and there is no refresh token"}
	}
	tok, err := tokenGrant(ctx, signInClient(s.HTTPClient), s.OAuth,
		url.Values{"grant_type": {"refresh_token"}, "refresh_token": {ms.RefreshToken}})
	if err != nil {
		return "", microsoftError(err, s.OAuth, s.knownSecrets().Add(ms.RefreshToken).Add(ms.AccessToken))
	}
	if tok.RefreshToken == "" { // the refresh token stays good (RFC 6749 6)
		tok.RefreshToken = ms.RefreshToken
	}
	s.mu.Lock()
	s.ms = tok
	s.mu.Unlock()
	if s.OnRefresh != nil {
		s.OnRefresh(tok)
	}
	return tok.AccessToken, nil
}

// xboxAuth is an answer of user.auth or xsts.auth.
type xboxAuth struct {
	IssueInstant  time.Time `json:"IssueInstant"`
	NotAfter      time.Time `json:"NotAfter"`
	Token         string    `json:"Token"`
	DisplayClaims struct {
		Xui []struct {
			Uhs string `json:"uhs"`
			Xid string `json:"xid"`
			Gtg string `json:"gtg"`
			Dlg string `json:"DelegationToken"`
		} `json:"xui"`
	} `json:"DisplayClaims"`
}

// userTokenRequest is user.auth's request for a Microsoft access token.
func userTokenRequest(access string) any {
	return map[string]any{"RelyingParty": "http://auth.xboxlive.com", "TokenType": "JWT",
		"Properties": map[string]string{"AuthMethod": "RPS", "SiteName": "user.auth.xboxlive.com", "RpsTicket": "d=" + access}}
}

// xstsRequest is xsts.auth's request for a user token.
func (s *SignIn) xstsRequest(userToken string) any {
	return map[string]any{"RelyingParty": cmp.Or(s.RelyingParty, XboxRelyingParty), "TokenType": "JWT",
		"Properties": map[string]any{"UserTokens": []string{userToken}, "SandboxId": cmp.Or(s.Sandbox, "RETAIL")}}
}

// xstsToken reads who an XSTS answer is for.
func xstsToken(a *xboxAuth) (*XboxToken, error) {
	if len(a.DisplayClaims.Xui) == 0 || a.DisplayClaims.Xui[0].Uhs == "" {
		return nil, &SignInError{Step: "XSTS token", Message: "the answer names no user (DisplayClaims.xui[0].uhs)"}
	}
	x := a.DisplayClaims.Xui[0]
	return &XboxToken{UserHash: x.Uhs, XUID: x.Xid, Gamertag: x.Gtg, Token: a.Token, NotAfter: a.NotAfter, DelegationToken: x.Dlg}, nil
}

// maxAuthBody bounds an authentication answer.
const maxAuthBody = 64 << 10

// post sends one Xbox authentication request and reads its answer; its
// error holds none of known's secrets, nor of what it posts.
func (s *SignIn) post(ctx context.Context, step, url string, body any, known func() xblauth.Secrets) (*xboxAuth, error) {
	return postAuth(ctx, s.HTTPClient, step, url, body, nil, known)
}

// knownSecrets returns every credential the sign-in holds: the Microsoft
// account's tokens, the user token, the XSTS token and its delegation
// token, and those a 401 last dropped, which no step's refusal may quote (one operator's hosts may share
// what each was sent, and a renewal's refusal may quote the token still in
// use).
func (s *SignIn) knownSecrets() xblauth.Secrets {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss := append(s.heldLocked(), s.dropped...)
	if ms := s.msLocked(); ms != nil {
		ss = ss.Add(ms.RefreshToken).Add(ms.AccessToken)
	}
	return ss
}

// maxDropped bounds the secrets a sign-in keeps of the tokens 401s
// dropped: the last few renewals' (each adds a few forms of each token).
const maxDropped = 64

// lastSecrets returns the first maxDropped of ss, the newest first.
func lastSecrets(ss xblauth.Secrets) xblauth.Secrets {
	return slices.Clip(ss[:min(len(ss), maxDropped)])
}

// heldLocked returns the Xbox tokens the sign-in holds: the user token,
// the XSTS token and its delegation token.
func (s *SignIn) heldLocked() xblauth.Secrets {
	var ss xblauth.Secrets
	if s.user != nil {
		ss = ss.Add(s.user.Token)
	}
	if s.xsts != nil {
		ss = ss.Add(s.xsts.Token).Add(s.xsts.DelegationToken)
	}
	return ss
}

// postAuth sends one Xbox authentication request with hc, following no
// redirect (signInClient), signed with key under AuthSignaturePolicy when
// key is set, and reads its answer: a token with life left (lifeOf). Its
// error holds none of the secrets known returns (read only for an error;
// nil: none), nor of what it posts or sends in a header.
func postAuth(ctx context.Context, hc *http.Client, step, url string, body any, key *ecdsa.PrivateKey, known func() xblauth.Secrets) (*xboxAuth, error) {
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, "POST", url, bytes.NewReader(b))
	if err != nil {
		return nil, &SignInError{Step: step, Message: "cannot make the request", Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("x-xbl-contract-version", "1")
	if key != nil {
		if err := xblsign.Sign(req, key, time.Now(), AuthSignaturePolicy()); err != nil {
			return nil, &SignInError{Step: step, Message: "cannot sign the request", Err: err}
		}
	}
	secrets := func() xblauth.Secrets { // what the answer may echo
		var ss xblauth.Secrets
		if known != nil {
			ss = slices.Clip(known())
		}
		return ss.PostedSecrets(b).HeaderSecrets(req.Header)
	}
	resp, err := signInClient(hc).Do(req)
	if err != nil {
		return nil, failed(step, 0, err, secrets())
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAuthBody+1))
	if err != nil {
		return nil, failed(step, resp.StatusCode, fmt.Errorf("reading the answer: %w", err), secrets())
	}
	if len(data) > maxAuthBody {
		return nil, &SignInError{Step: step, Status: resp.StatusCode, Message: "oversized answer"}
	}
	if resp.StatusCode != http.StatusOK {
		return nil, signInFailure(step, resp.StatusCode, data, secrets())
	}
	var a xboxAuth
	if err := json.Unmarshal(data, &a); err != nil || a.Token == "" || a.NotAfter.IsZero() {
		return nil, &SignInError{Step: step, Status: resp.StatusCode, Message: "the answer lacks Token or NotAfter"}
	}
	if lifeOf(&a, time.Now()) <= 0 {
		return nil, &SignInError{Step: step, Status: resp.StatusCode,
			Message: "the token has no life (NotAfter not after IssueInstant, or without IssueInstant not after now)"}
	}
	return &a, nil
}

// SignInError is a failed step of signing in. XErr is the Xbox
// authentication error code of a refusal (XSTS answers 401 with it).
type SignInError struct {
	Step    string // "Microsoft account", "Xbox user token", "XSTS token"
	Status  int
	XErr    int64
	Message string
	Err     error // the cause, when a request failed (a deadline, a network error)
}

// Unwrap returns the cause.
func (e *SignInError) Unwrap() error { return e.Err }

// HRESULT returns the code of the failure, as the Xbox sign-in reports it:
// the XErr itself (an HRESULT: 0x8015DC03 is XErrBanned), else the HRESULT
// of the cause (a deadline, a network error), else of the HTTP status, else
// E_XBL_AUTH_UNKNOWN_ERROR.
func (e *SignInError) HRESULT() hresult.HRESULT {
	switch {
	case e.XErr > 0 && e.XErr <= math.MaxUint32:
		return hresult.HRESULT(e.XErr)
	case e.Err != nil:
		return hresult.Of(e.Err)
	case e.Status >= 400:
		return hresult.FromStatus(e.Status)
	}
	return hresult.E_XBL_AUTH_UNKNOWN_ERROR
}

// Is reports whether target is e's HRESULT, so that errors.Is(err,
// hresult.HTTP_E_STATUS_REQUEST_TIMEOUT) holds for a sign-in that timed out.
func (e *SignInError) Is(target error) bool { return hresult.Is(e, target) }

// Error names the step and the cause.
func (e *SignInError) Error() string {
	msg := e.Message
	if cause, ok := xerrCauses[e.XErr]; ok {
		msg = cause
	}
	s := "client: sign-in failed at the " + e.Step
	if e.Status != 0 {
		s += " (HTTP " + strconv.Itoa(e.Status) + ")"
	}
	if e.XErr != 0 {
		s += " XErr " + strconv.FormatInt(e.XErr, 10)
	}
	if msg != "" {
		s += ": " + msg
	}
	return s
}

// The XErr codes XSTS refuses a user with, and what they mean.
const (
	XErrBanned           int64 = 2148916227
	XErrGuardian         int64 = 2148916229
	XErrNoProfile        int64 = 2148916233
	XErrTermsOfUse       int64 = 2148916234
	XErrCountry          int64 = 2148916235
	XErrAgeVerification  int64 = 2148916236
	XErrAgeVerification2 int64 = 2148916237
	XErrChildAccount     int64 = 2148916238
)

var xerrCauses = map[int64]string{
	XErrBanned:           "the account is banned from Xbox",
	XErrGuardian:         "the account is restricted: a guardian has not allowed online play (account.microsoft.com/family)",
	XErrNoProfile:        "the Microsoft account has no Xbox profile yet (create one by signing in at xbox.com)",
	XErrTermsOfUse:       "the account has not accepted the Xbox terms of use (sign in at xbox.com)",
	XErrCountry:          "Xbox is not available in the account's country or region",
	XErrAgeVerification:  "the account needs age verification (login.live.com)",
	XErrAgeVerification2: "the account needs age verification (login.live.com)",
	XErrChildAccount:     "a child account: an adult must add it to a Microsoft family (account.microsoft.com/family)",
}

// signInFailure reads an authentication refusal: {"XErr": ..., "Message": ...},
// without the secrets ss names, nor any other text that looks like a
// credential (safetext.HideOpaque: a token echoed in an encoding, or split,
// that no scrubbing of whole secrets finds).
func signInFailure(step string, status int, data []byte, ss xblauth.Secrets) error {
	var body struct {
		XErr    int64  `json:"XErr"`
		Message string `json:"Message"`
	}
	json.Unmarshal(data, &body)
	return &SignInError{Step: step, Status: status, XErr: body.XErr, Message: safetext.Clip(safetext.HideOpaque(ss.Scrub(body.Message)), 200)}
}

// DeviceLogin signs a Microsoft account in with the device code flow: it
// asks for a code, calls show with it (the URL to open and the code to
// enter), and waits until the user has entered it, the code expires, or
// ctx ends. It polls as RFC 8628 3.5 asks: at the interval the service
// gave (5 s if none), 5 s more after each slow_down, and after a poll that
// timed out (a network timeout, or the poll's own deadline) it polls again
// at twice the interval; any other failure ends it.
func DeviceLogin(ctx context.Context, cfg *oauth2.Config, hc *http.Client, show func(*oauth2.DeviceAuthResponse)) (*oauth2.Token, error) {
	c := signInClient(hc)
	// golang.org/x/oauth2 (v0.38.0) makes the device code request without
	// ctx: the client's transport gives it ctx, so that it ends with it.
	c.Transport = withContext{base: cmp.Or[http.RoundTripper](c.Transport, http.DefaultTransport), ctx: ctx}
	ctx = context.WithValue(ctx, oauth2.HTTPClient, c)
	da, err := cfg.DeviceAuth(ctx)
	if err != nil {
		return nil, microsoftError(err, cfg, nil)
	}
	show(da)
	return pollDevice(ctx, c, cfg, da)
}

// withContext sends each request under ctx too: it ends when ctx ends or
// its own context does (a client's Timeout gives a request made without a
// context one of its own), whichever comes first.
type withContext struct {
	base http.RoundTripper
	ctx  context.Context
}

func (w withContext) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(req.Context())
	stop := context.AfterFunc(w.ctx, func() { cancel(context.Cause(w.ctx)) })
	end := func() { stop(); cancel(nil) }
	resp, err := w.base.RoundTrip(req.WithContext(ctx))
	if err != nil {
		end()
		return nil, err
	}
	resp.Body = &endingBody{ReadCloser: resp.Body, end: end}
	return resp, nil
}

// endingBody calls end once it is closed.
type endingBody struct {
	io.ReadCloser
	end func()
}

func (b *endingBody) Close() error {
	err := b.ReadCloser.Close()
	b.end()
	return err
}

// BrowserLogin signs a Microsoft account in with the authorization code
// flow and a loopback redirect (with PKCE): it listens on 127.0.0.1, calls
// open with the URL the user must visit in a browser, and waits for the
// browser to come back with the code, or ctx to end.
func BrowserLogin(ctx context.Context, cfg *oauth2.Config, hc *http.Client, open func(url string)) (*oauth2.Token, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	defer ln.Close()
	c := *cfg
	c.RedirectURL = "http://localhost:" + strconv.Itoa(ln.Addr().(*net.TCPAddr).Port) + "/"
	state, verifier := oauth2.GenerateVerifier(), oauth2.GenerateVerifier()
	type result struct {
		code string
		err  error
	}
	got := make(chan result, 1)
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		var res result
		switch {
		case q.Get("state") != state:
			http.Error(w, "this sign-in was not started here", http.StatusBadRequest)
			return
		case q.Get("error") != "":
			res.err = &SignInError{Step: "Microsoft account", Message: safetext.Clip(q.Get("error")+": "+q.Get("error_description"), 200)}
			io.WriteString(w, "Sign-in failed. You can close this page.\n")
		default:
			res.code = q.Get("code")
			io.WriteString(w, "Signed in. You can close this page.\n")
		}
		select {
		case got <- res:
		default:
		}
	})}
	go srv.Serve(ln)
	defer func() { // let the browser read its "Signed in" page, then stop
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if srv.Shutdown(ctx) != nil {
			srv.Close()
		}
	}()
	open(c.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier)))
	var res result
	select {
	case res = <-got:
	case <-ctx.Done():
		return nil, ended("Microsoft account", ctx.Err())
	}
	if res.err != nil {
		return nil, res.err
	}
	ctx = context.WithValue(ctx, oauth2.HTTPClient, signInClient(hc))
	tok, err := c.Exchange(ctx, res.code, oauth2.VerifierOption(verifier))
	if err != nil {
		return nil, microsoftError(err, &c, xblauth.Secrets{}.Add(res.code).Add(verifier))
	}
	return tok, nil
}

// microsoftError makes a SignInError of a failed Microsoft account request:
// the OAuth error code and description when the service sent them, else
// the cause (a deadline, a network error), without the secrets the request
// posted (ss: a refresh token, a code, a verifier; and cfg's client
// secret, which a confidential client posts), which the service may echo.
// A *SignInError (tokenGrant's) is returned as it is.
func microsoftError(err error, cfg *oauth2.Config, ss xblauth.Secrets) error {
	if se, ok := err.(*SignInError); ok { // tokenGrant's, which quotes nothing
		return se
	}
	if cfg != nil {
		ss = ss.Add(cfg.ClientSecret)
	}
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		return &SignInError{Step: "Microsoft account", Status: re.Response.StatusCode,
			Message: safetext.Clip(ss.Scrub(re.ErrorCode), 64) + ": " + safetext.Clip(ss.Scrub(re.ErrorDescription), 200)}
	}
	return failed("Microsoft account", 0, err, ss)
}
