// Package mock is a complete server-side implementation of Xbox services'
// Fine-Grained Rate Limiting, with realistic answers for the calls games make
// most, for integration tests.
//
// A Handler serves every host in the limits data, choosing the service by the
// request's Host and the user and title from a token minted by Token. It
// answers profile, presence, social, people hub, title hub, user search,
// privacy, achievements, user stats, leaderboards, MPSD (sessions, invites
// and search handles), SmartMatch and reputation calls in the shapes the real
// services answer (as XSAPI's tests and recorded answers show them; each
// shape is checked against a recording in mock/wire_test.go and
// mock/recordings_test.go), from one World (accounts, relationships,
// titles, progress, stats; Config.World, SetWorld), and validates request
// bodies as the services do: 400 for a body of the wrong shape, 403 for
// another title's service configuration. It applies FGRL as the Xbox
// services "Fine-Grained Rate Limiting" page describes it, and answers 429
// with Retry-After and the documented body. It needs no socket: a Handler is also an http.RoundTripper, so it can sit under a
// transport in-process, including inside a testing/synctest bubble (it starts
// no goroutines). NewServer puts it on a loopback port in the style of
// httptest.Server, closing idle connections and bounding how many are open
// (ConnLimits).
//
// Over a server (a socket, or in-memory connections), it also serves the
// Real-Time Activity service at wss://rta.xboxlive.com/connect as XSAPI
// speaks it (rtawire.go): subscriptions to presence, relationships and
// MPSD sessions, whose events come from the world's writes (rtaevents.go).
// Each websocket runs one writer goroutine until it closes; a server of
// the Handler closes them with DropRTA (Server.Close does).
//
// Which requests count: FGRL counts a request against its user + title +
// rule scope when its host is a limits rule's, its token one Token minted,
// and its method and path a route of the service (at a service the mock
// counts but does not answer, such as the Store's or clubs', any path,
// answered 404 once counted; at any other host with Config.Fallback, any
// path, counted under the fallback rule and answered 404). It is counted
// before faults apply: a request a fault answers has been counted. These
// are not counted: a request at a sign-in host (login.live.com, the
// identity platform, the user, XSTS, device and title token services,
// SISU); the title's endpoints (title.mgt.xboxlive.com) read without a
// token or where no rule covers that host; at a host no rule covers
// (404 NoSuchHost); with a token the mock did not mint (401); to a path
// or method the service does not serve (404, or 405 with Allow); one a
// script rule answers, unless the rule says Count (then only at a rule's
// host with the mock's token). A legacy title's requests
// (Config.LegacyTitles) are not counted against FGRL but are among their
// scope's requests (Metrics). The stages are in pipeline.go; the rule is
// held by TestWhichRequestsCount.
//
// Time: the mock reads the time from Config.Now (time.Now by
// default, which testing/synctest makes virtual); its fault latency waits on
// a runtime timer, which synctest makes virtual too. Config.Now exists for
// replays in virtual time outside a bubble (the xblcall simulator).
//
// As an extension, every counted response carries RateLimit-Policy and
// RateLimit headers describing both windows (written by ratelimit.SetHeaders,
// which documents them), so a client can keep its budget in sync. For a
// rule with a per-publisher sustain (the Store services) the sustain window
// is the one that binds: the publisher's when it leaves less than the
// title's, or when the title has none.
package mock

import (
	"cmp"
	"context"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/xblgo/fgrl/throttle"
)

// Handler is the mock Xbox services. Create it with New or NewHandler; it
// is safe for concurrent use.
//
// A Handler is one pipeline (pipeline.go) in front of one service value per
// Xbox service (services.go), all answering from one world (world.go), and
// one journal of the calls it answered (journal.go), from which its log,
// counters, live page, record of calls and checks are all derived.
type Handler struct {
	cfg     config
	routes  map[string][]route // every service's, by the rule service it answers (services)
	world   *world
	signIn  *signIn
	journal *journal
	nsal    []byte // the title endpoints' answer (nsal.go), for the hosts served
	rta     *rtaHub
	tokens  *tokenCache // the identities of tokens accepted (authenticate)
	// exchanges are the exchanges of requests answered, for ServeHTTP to
	// reuse. A pointer: the runtime keeps a pool in use alive through a
	// collection, and a pool inside the Handler would keep the whole
	// Handler (its journal, its world) alive with it.
	exchanges *sync.Pool

	faults   atomic.Pointer[faultState] // SetFaults changes them while serving
	dice     dice
	switches atomic.Int64                // SetFaults calls
	script   atomic.Pointer[scriptState] // nil: no script
}

// New returns a Handler configured by c, or what is wrong with c.
func New(c Config) (*Handler, error) {
	cfg, err := c.check()
	if err != nil {
		return nil, err
	}
	w := newWorld(cfg.world, newState(cmp.Or(cfg.maxKeys, throttle.DefaultMaxKeys)/8, cfg.maxStateBytes), cfg.now, cfg.scids,
		cmp.Or(cfg.signInTitle, "1234567890"))
	scopes := make([]string, 0, len(cfg.limits.Rules)+1)
	for i := range cfg.limits.Rules {
		scopes = append(scopes, cfg.limits.Rules[i].Scope())
	}
	if f := cfg.limits.Fallback; f != nil {
		scopes = append(scopes, f.Scope())
	}
	h := &Handler{
		cfg:       cfg,
		routes:    routesOf(services(w)),
		world:     w,
		signIn:    newSignIn(w),
		journal:   newJournal(cfg.logger, scopes),
		tokens:    newTokenCache(tokenCacheSets),
		dice:      dice{rng: newRand(cfg.faults.Seed)},
		exchanges: new(sync.Pool),
	}
	h.nsal = nsalDocument(h.Hosts())
	// NSAL is counted where the limits have a rule for its host (2022's
	// "authentication"), as its other calls are.
	h.routes["authentication"] = []route{{method: http.MethodGet, path: pat("/titles/{}/endpoints"), contract: "1",
		serve: func(c *call) { writeRaw(c.w, http.StatusOK, h.nsal) }}}
	h.rta = newRTAHub(w, &h.dice, h.rtaFault)
	w.rta = h.rta
	h.faults.Store(newFaultState(cfg.faults.setAt(cfg.now())))
	if err := h.SetScript(cfg.script); err != nil {
		return nil, err
	}
	if cfg.account != nil {
		h.SetAccount(*cfg.account)
	}
	return h, nil
}

// NewHandler returns the default mock, New(Config{}).
func NewHandler() *Handler {
	h, err := New(Config{})
	if err != nil {
		panic(err) // the zero Config is valid
	}
	return h
}

// Must returns h, or panics with err: for tests and package-level
// variables, as template.Must is, where a bad Config is the program's bug.
func Must(h *Handler, err error) *Handler {
	if err != nil {
		panic(err)
	}
	return h
}

// SetAccount makes a the account that signs in from now on (a device code
// approves as it), and its XErr the refusal XSTS answers it with.
func (h *Handler) SetAccount(a Account) {
	s := h.signIn
	s.mu.Lock()
	s.account = a
	s.accounts[a.XUID] = a
	s.mu.Unlock()
	if a.Gamertag != "" {
		h.world.setGamertag(a.XUID, a.Gamertag)
	}
}

// SetWorld replaces the mock's world with w and resets the services'
// state to it: presence, sessions and achievement progress made since are
// dropped. RTA subscribers are told what changed of the presence and
// relationships they follow. A zero World is the default one. It
// answers a *datafile.Error, changing nothing, for a World that cannot be.
func (h *Handler) SetWorld(w World) error {
	if err := w.check(); err != nil {
		return err
	}
	h.world.change(func() { h.world.ix.Store(indexWorld(w, len(w.Accounts) > 0)) })
	return nil
}

// World returns the world the mock answers from as it was seeded: no
// accounts for the default world.
func (h *Handler) World() World {
	ix := h.world.ix.Load()
	if !ix.seeded {
		return World{Accounts: []WorldAccount{}, Apps: ix.src.Apps}
	}
	return ix.src
}

// ResetWorld puts the services back to the world as it was seeded:
// presence, sessions and progress from then on are dropped. FGRL's counts
// are not touched (ResetCounts resets them).
func (h *Handler) ResetWorld() { h.world.change(nil) }

// Reset puts the mock back as it was after its world was seeded, in one
// call, as a test suite does between cases: no faults, no script, the
// services' state back to the world as seeded (ResetWorld), no record of
// calls and no FGRL counts. The world stays as seeded, and the counters
// (Metrics) stay. Every part is reset even when the counts cannot be: the
// error is then ResetCounts'.
func (h *Handler) Reset(ctx context.Context) error {
	h.SetFaults(Faults{}) // no faults always check
	h.dice.mu.Lock()
	h.dice.restart(0) // a case run again after Reset rolls as it did first
	h.dice.mu.Unlock()
	h.SetScript(Script{}) // no script always checks
	h.ResetWorld()
	h.ForgetCalls()
	return h.ResetCounts(ctx, nil)
}
