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
// another title's service configuration. It applies FGRL to every request
// before routing, exactly as the Xbox services "Fine-Grained Rate
// Limiting" page describes it, and answers 429 with Retry-After and the documented body. It needs no
// socket: a Handler is also an http.RoundTripper, so it can sit under a
// transport in-process, including inside a testing/synctest bubble (it starts
// no goroutines). NewServer puts it on a loopback port in the style of
// httptest.Server, closing idle connections and bounding how many are open
// (ConnLimits).
//
// Time: the mock reads the time from Config.Now (time.Now by
// default, which testing/synctest makes virtual); its fault latency waits on
// a runtime timer, which synctest makes virtual too. Config.Now exists for
// replays in virtual time outside a bubble (the xblcall simulator).
//
// As an extension, every counted response carries RateLimit-Policy and
// RateLimit headers describing both windows (written by ratelimit.SetHeaders,
// which documents them), so a client can keep its budget in sync.
package mock

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/throttle"
)

// Handler is the mock Xbox services. Create it with NewHandler; it is safe for
// concurrent use.
type Handler struct {
	cfg    config
	routes map[string][]route // every service's, by the rule service it answers (services)
	world  *world
	signIn *signIn

	mu     sync.Mutex // guards rng and flip
	rng    *rand.Rand
	flip   bool
	faults atomic.Pointer[Faults] // SetFaults changes them while serving
	obs    observatory
	script atomic.Pointer[scriptState] // nil: no script
	calls  callLog
	live   liveFeed // the event streams' shared snapshot
}

// New returns a Handler configured by c, or what is wrong with c.
func New(c Config) (*Handler, error) {
	cfg, err := c.check()
	if err != nil {
		return nil, err
	}
	w := newWorld(cfg.world, &cfg)
	h := &Handler{
		cfg:    cfg,
		routes: routesOf(services(w)),
		world:  w,
		signIn: newSignIn(w),
		rng:    rand.New(rand.NewPCG(cfg.faults.Seed, cfg.faults.Seed^0x9e3779b97f4a7c15)),
	}
	f := cfg.faults
	h.faults.Store(&f)
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

// Faults returns the faults in force.
func (h *Handler) Faults() Faults { return *h.faults.Load() }

// SetFaults changes the faults while the handler serves (the admin API's
// PUT /_fgrl/api/faults). A new Seed restarts the fault dice.
func (h *Handler) SetFaults(f Faults) error {
	if err := f.Check(); err != nil {
		return err
	}
	now := h.cfg.now()
	f.Services = slices.Clone(f.Services)
	for i := range f.Services {
		sf := &f.Services[i]
		if _, ok := h.cfg.limits.ByScope(sf.Service); !ok && !h.hasService(sf.Service) {
			return fmt.Errorf("mock: services[%d]: no rule has service or scope %s", i, safetext.Quote(sf.Service, 60))
		}
		if sf.For > 0 && sf.Until.IsZero() {
			sf.Until = now.Add(time.Duration(sf.For)).UTC()
		}
	}
	h.obs.faultSwitches.Add(1)
	if h.cfg.logger != nil {
		h.cfg.logger.Info("fgrl mock: faults set", "errorRate", f.ErrorRate, "resetRate", f.ResetRate, "truncateRate", f.TruncateRate,
			"latency", f.Latency, "services", describeServiceFaults(f.Services))
	}
	h.mu.Lock()
	if old := h.faults.Load(); old.Seed != f.Seed {
		h.rng = rand.New(rand.NewPCG(f.Seed, f.Seed^0x9e3779b97f4a7c15))
	}
	h.faults.Store(&f)
	h.mu.Unlock()
	return nil
}

// ServeHTTP counts the request against its user + title + service and
// either refuses it (429) or serves it, and records it (Calls).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.serveObserved(w, r)
}

// serve answers r; when e is not nil it notes what it counted there.
func (h *Handler) serve(w http.ResponseWriter, r *http.Request, e *logEntry) {
	if st := h.script.Load(); st != nil && len(st.script.Rules) > 0 && h.serveScripted(st, w, r, e) {
		return
	}
	if host := strings.ToLower(hostOnly(r.Host)); isSignInHost(host) {
		h.signIn.serve(w, r, host)
		return
	}
	rule, known := h.cfg.limits.Match(r.Method, r.Host, r.URL.Path)
	if !known && !h.cfg.fallback {
		writeError(w, http.StatusNotFound, "NoSuchHost", "the mock serves no service at host "+hostOnly(r.Host))
		return
	}
	if !known {
		rule = h.cfg.limits.Fallback
	}
	id, err := parseToken(r.Header.Get("Authorization"))
	if err != nil {
		writeError(w, http.StatusUnauthorized, "Unauthorized", err.Error())
		return
	}
	var rt *route
	c := &call{r: r, id: id, maxBody: h.cfg.maxBody}
	if known && len(h.routes[rule.Service]) > 0 {
		// A call the mock does not serve, at a service it answers, is
		// answered uncounted: the real service would serve it, and
		// counting the mock's gap would skew the caller's budget. The
		// services it only counts (the Store's, clubs, ...) count every
		// call.
		if rt = h.match(c, rule); rt == nil {
			h.notServed(w, r, rule)
			return
		}
	}
	if e != nil {
		e.scope, e.user, e.title, e.xuid = rule.Scope(), id.userhash, id.title, id.xuid
	}
	h.obs.scope(rule.Scope()).requests.Add(1)
	if !h.admit(w, r, rule, id, e) {
		return
	}
	w, done := h.fault(w, r, rule)
	if done {
		return
	}
	if rt == nil {
		writeError(w, http.StatusNotFound, "NotFound", "no such resource")
	} else {
		c.w = w
		rt.serve(c)
	}
	if tw, ok := w.(*truncWriter); ok {
		tw.cut()
	}
}

// Counts reports the FGRL counts of a key without counting a request: a
// user + title for a rule scope (such as "profile" or "presence/write"). The
// user is the userhash of the user's token (UserHash gives the mock's), as
// for every throttle.Key in this module: the service counts per XUID, and a
// userhash stands for exactly one XUID, so the counts are the same.
func (h *Handler) Counts(k throttle.Key) (throttle.Decision, error) {
	rule, ok := h.cfg.limits.ByScope(k.Scope)
	if !ok {
		return throttle.Decision{}, errors.New("mock: no rule has scope " + safetext.Quote(k.Scope, 64))
	}
	k.Scope = rule.Scope()
	return h.cfg.store.Peek(context.Background(), k, rule.Limit(), h.cfg.now())
}

// Must returns h, or panics with err: for tests and package-level
// variables, as template.Must is, where a bad Config is the program's bug.
func Must(h *Handler, err error) *Handler {
	if err != nil {
		panic(err)
	}
	return h
}

// hasService reports whether a rule of the limits has service s.
func (h *Handler) hasService(s string) bool {
	for _, r := range h.cfg.limits.Rules {
		if r.Service == s {
			return true
		}
	}
	return false
}

// describeServiceFaults writes service faults for the log, one phrase each.
func describeServiceFaults(sfs []ServiceFault) string {
	parts := make([]string, 0, len(sfs))
	for _, sf := range sfs {
		p := sf.Service + ":"
		if sf.Status != 0 {
			p += " " + strconv.Itoa(sf.Status)
		}
		if sf.Reset {
			p += " reset"
		}
		if sf.Latency > 0 {
			p += " +" + time.Duration(sf.Latency).String()
		}
		if sf.Rate > 0 {
			p += fmt.Sprintf(" %.0f%%", 100*sf.Rate)
		}
		if !sf.Until.IsZero() {
			p += " until " + sf.Until.Format(time.RFC3339)
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, "; ")
}
