// Package client is a typed, XSAPI-like client for the Xbox services games
// call most: profile, presence, social, privacy, achievements, user stats,
// leaderboards, multiplayer sessions and SmartMatch.
//
// Create one Client per title and act as a user with As:
//
//	c, err := client.New(client.Config{
//		TitleID: "1234567890",
//		Tokens:  client.TokenFunc(myTokenCache.Get), // XBL3.0 tokens per user
//	})
//	me := c.As("2533274791234567")
//	profiles, err := me.GetProfiles(ctx, []string{"2533274791234567"}, []string{"Gamertag"})
//
// Every request carries what XSAPI sends (the service's
// x-xbl-contract-version, Content-Type, Accept-Language, a User-Agent naming
// this SDK) and goes through a transport.Transport by default, so calls get
// XSAPI's retries plus the local FGRL budget. Calls XSAPI never retries
// (WriteSession, SendInvites, CreateMatchTicket, SubmitReputationFeedback)
// are sent once.
//
// Every failure of a call is an *Error, and of a sign-in a *SignInError, each
// carrying the HRESULT XSAPI would report (hresult.Reporter), so
// errors.Is(err, hresult.HTTP_E_STATUS_429_TOO_MANY_REQUESTS) tells a
// throttled call, and errors.As with a *transport.ThrottleError (which the
// Error wraps) says whether the service or the local budget refused it and
// when to retry.
package client

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/xblgo/fgrl/transport"
)

// Version is the SDK version sent in the User-Agent.
const Version = "0.1.0"

// Config configures a Client.
type Config struct {
	// Tokens gives the Authorization (and Signature) of each acting user.
	// Required.
	Tokens TokenSource
	// TitleID is the title the calls are made for. Required.
	TitleID string
	// Sandbox names the sandbox the tokens were issued in; it is not sent
	// (tokens carry it) but appears in errors. Empty means "RETAIL".
	Sandbox string
	// AcceptLanguage is sent with every request. Empty means "en-US".
	AcceptLanguage string
	// Transport sends the requests. If nil, a transport.Transport for
	// TitleID is used (XSAPI's retries plus the local budget), whose
	// RefreshToken is Tokens' own when Tokens has one (SignIn,
	// ServiceSignIn): a call answered 401 is sent once more with a renewed
	// token, as XSAPI does. A redirect is followed only within its origin
	// (scheme, host and port): one to another origin is the call's answer,
	// an error, so no token or signature is sent where the call was not
	// made, whatever Transport does with a redirect's headers.
	Transport http.RoundTripper
	// RTATransport sends the upgrade of the Real-Time Activity websocket
	// (User.Subscribe) and then carries it: it must answer a 101 with a
	// writable body, as an *http.Transport does (not a transport.Transport,
	// whose accounting is for calls). If nil, http.DefaultTransport.
	// Endpoints applies to it too ("rta.xboxlive.com").
	RTATransport http.RoundTripper
	// Endpoints overrides where a service host is reached, for example
	// {"profile.xboxlive.com": "http://127.0.0.1:8080"}. The request keeps
	// the real host name in its Host header, as the mock expects.
	Endpoints map[string]string
	// SignaturePolicies gives a host's signature policy (lower-case host
	// name to policy, as NSAL lists them) for calls made with a token bound
	// to a proof key (Token.Key); a host not named gets
	// DefaultSignaturePolicy.
	SignaturePolicies map[string]SignaturePolicy
	// BatchWindow, when set, merges single-user lookups (GetProfile with
	// the same settings, GetPresence) that one acting user makes within it
	// into one batch call (POST /users/batch/profile/settings, up to 100
	// users; POST /users/batch, up to 1100), as the trace analyzer's
	// small-batch rule asks: a few milliseconds turn many calls into one.
	// Each lookup waits for its batch at most the window (capped at
	// MaxBatchWindow). A batch merges only lookups of one acting user whose
	// contexts carry the same transport policy (transport.PolicyOf: a
	// FailFast lookup never waits for a retry made for a patient one, nor
	// is a patient one refused for a FailFast one). Each lookup returns at
	// its own deadline or cancellation; the batch call runs until the
	// latest deadline of its lookups, with the first one's context values,
	// and is cancelled once none of them is waiting (not sent at all when
	// all left within the window). Zero: every lookup is its own call. A
	// lookup made alone, with or without a window, is the single-user call
	// (GET /users/xuid(X)/profile/settings, GET /users/xuid(X)), never a
	// batch call listing one user, which the analyzer's small-batch rule
	// flags.
	BatchWindow time.Duration
}

// Client calls Xbox services for one title. It is safe for concurrent use.
type Client struct {
	cfg       Config
	http      *http.Client
	endpoints map[string]*url.URL
	userAgent string
	// signsEachAttempt: Transport is the fgrl transport, which signs each
	// attempt (transport.WithSigner); another RoundTripper gets requests
	// signed once, before they are sent.
	signsEachAttempt bool
	profiles         batcher[Profile]
	presences        batcher[Presence]
}

// checkRedirect is the calls' redirect policy: sameOrigin, and a call
// signed once, before it was sent (a Transport that is not fgrl's, which
// signs each attempt), follows none: its signature is for the first URL.
func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	if !c.signsEachAttempt && via[0].Header.Get("Signature") != "" {
		return http.ErrUseLastResponse
	}
	return sameOrigin(req, via)
}

// sameOrigin is the calls' redirect policy: follow one within the
// request's origin, up to ten as net/http does; answer with one to
// another origin (http.ErrUseLastResponse).
func sameOrigin(req *http.Request, via []*http.Request) error {
	first := via[0].URL
	if req.URL.Scheme != first.Scheme || req.URL.Host != first.Host {
		return http.ErrUseLastResponse
	}
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	return nil
}

// New returns a Client, or an error naming the missing or malformed setting.
func New(cfg Config) (*Client, error) {
	if cfg.Tokens == nil {
		return nil, errors.New("client: Config.Tokens is required")
	}
	if cfg.TitleID == "" {
		return nil, errors.New("client: Config.TitleID is required")
	}
	if cfg.Sandbox == "" {
		cfg.Sandbox = "RETAIL"
	}
	if cfg.AcceptLanguage == "" {
		cfg.AcceptLanguage = "en-US"
	}
	if cfg.BatchWindow < 0 {
		return nil, errors.New("client: Config.BatchWindow is negative")
	}
	cfg.BatchWindow = min(cfg.BatchWindow, MaxBatchWindow)
	if cfg.Transport == nil {
		t := &transport.Transport{TitleID: cfg.TitleID}
		if r, ok := cfg.Tokens.(interface {
			RefreshToken(*http.Request) (string, error)
		}); ok {
			t.RefreshToken = r.RefreshToken // a 401: renew the token, retry once
		}
		cfg.Transport = t
	}
	c := &Client{
		cfg:       cfg,
		http:      &http.Client{Transport: cfg.Transport},
		endpoints: make(map[string]*url.URL, len(cfg.Endpoints)),
		userAgent: "fgrl/" + Version + " (XboxServicesAPI-compatible; title " + cfg.TitleID + ")",
	}
	for host, p := range cfg.SignaturePolicies {
		if err := p.Check(); err != nil {
			return nil, fmt.Errorf("client: Config.SignaturePolicies[%s]: %w", host, err)
		}
	}
	_, c.signsEachAttempt = cfg.Transport.(*transport.Transport)
	c.http.CheckRedirect = c.checkRedirect
	c.profiles.call, c.profiles.missing, c.profiles.limit = c.profileBatch, missingProfile, 100
	c.presences.call, c.presences.missing, c.presences.limit = c.presenceBatch, missingPresence, 1100
	c.profiles.api, c.presences.api = api{service: profileAPI.service, name: "GetProfile"}, api{service: presenceAPI.service, name: "GetPresence"}
	for host, base := range cfg.Endpoints {
		u, err := url.Parse(base)
		if err != nil || u.Scheme == "" || u.Host == "" {
			return nil, errors.New("client: Config.Endpoints[" + host + "]: not an absolute URL: " + base)
		}
		c.endpoints[strings.ToLower(host)] = u
	}
	return c, nil
}

// As returns a handle for calls made as the user xuid (the XSAPI "caller").
func (c *Client) As(xuid string) *User {
	return &User{c: c, xuid: xuid}
}

// User makes calls as one user. It is cheap; create one per call site if
// convenient.
type User struct {
	c    *Client
	xuid string
}

// XUID returns the acting user's xuid.
func (u *User) XUID() string { return u.xuid }
