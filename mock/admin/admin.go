// Package admin serves a mock's own endpoints beside its services: the
// live page, its event stream and the admin API, for test suites in any
// language (xblcall mock serves them). It reads and changes the mock
// through mock.Handler's exported methods only.
//
// The endpoints (every path but /metrics starts with Prefix):
//
//	GET    /metrics                 Config.Metrics, when set (mockprom.Handler: requests, 429s and 503s by scope, keys, store errors)
//	GET    /_fgrl/                  the live page: every key's counts against its limits, recent 429s, faults
//	GET    /_fgrl/events            the page's data (mock.Overview), as server-sent events, one a second
//	GET    /_fgrl/api/ready         {"ready":true} once the mock serves (for a test's or a container's readiness probe)
//	POST   /_fgrl/api/reset         all at once: no counts, calls, faults or script, the services' state back to the world as seeded
//	GET    /_fgrl/api/keys          the keys counted lately, with their counts (the overview's keys)
//	GET    /_fgrl/api/keys?user=U&title=T&scope=S     one key's counts (xuid=X instead of user: its userhash)
//	DELETE /_fgrl/api/keys?user=U&title=T&scope=S     forget one key's counts
//	DELETE /_fgrl/api/keys          forget every key's counts
//	GET    /_fgrl/api/faults        the faults in force (mock.Faults)
//	PUT    /_fgrl/api/faults        change the faults the body names, keep the others
//	DELETE /_fgrl/api/faults        no faults
//	GET    /_fgrl/api/world         the world as seeded (mock.World)
//	PUT    /_fgrl/api/world         seed the world from the body, a world file (JSON or YAML)
//	DELETE /_fgrl/api/world         the default world
//	POST   /_fgrl/api/world/reset   the services' state back to the world as seeded
//	GET    /_fgrl/api/script        the script set (mock.Script)
//	PUT    /_fgrl/api/script        set the script in the body (JSON or YAML)
//	DELETE /_fgrl/api/script        no script
//	GET    /_fgrl/api/calls         the calls the mock saw (mock.Call) that the query picks: method, host, path (a prefix), scope, xuid, status, script, since
//	GET    /_fgrl/api/calls.har     the same, as HAR 1.2 (xblcall analyze reads it)
//	DELETE /_fgrl/api/calls         forget the calls
//	POST   /_fgrl/api/check         mock.Handler.Check with the body's mock.CheckOptions: 200 when it passes, 422 with the failures
//
// Errors are JSON {"error": "..."} with a 4xx or 5xx status. Nothing runs
// until a request comes. An event stream ends when its request's context
// does: a server that shuts down gracefully ends its streams by cancelling
// its BaseContext (see xblcall mock).
package admin

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/mock"
)

// Prefix starts the paths of the live page and the admin API.
const Prefix = "/_fgrl/"

// Config says who may use the admin endpoints, and what they serve
// besides the mock's. The zero value admits loopback peers only, serves
// no metrics and logs nothing.
//
// Every request must name the mock in its Host header by an IP address,
// "localhost" or one of Hosts: a web page that rebinds its own name to
// 127.0.0.1 (DNS rebinding) sends that name and is refused. A peer that is
// not on loopback must present Token, as "Authorization: Bearer <token>" or
// as the query parameter token (what the live page passes on to its event
// stream); with no Token set, such peers are refused.
type Config struct {
	// Token admits peers that are not on loopback. Empty: none is.
	Token string
	// Hosts are further names the Host header may carry (the machine's name,
	// a container's network alias).
	Hosts []string
	// Metrics serves GET /metrics when not nil (mockprom.Handler(h)): a
	// parameter, so that a program importing mock for its tests does not
	// import a metrics library.
	Metrics http.Handler
	// Logger logs each refused request at level Warn, with its peer; nil
	// logs nothing.
	Logger *slog.Logger
}

// Handler returns h's admin endpoints, for a server that also serves h
// (WithServices serves both).
func Handler(h *mock.Handler, c Config) http.Handler {
	a := &admin{h: h}
	mux := http.NewServeMux()
	if c.Metrics != nil {
		mux.Handle(metricsPattern, c.Metrics)
	}
	for _, e := range endpoints {
		mux.HandleFunc(e.pattern, func(w http.ResponseWriter, r *http.Request) { e.serve(a, w, r) })
	}
	notServed(mux, c.Metrics != nil)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if status, why := c.admit(r); status != 0 {
			c.logRefusal(r, status)
			writeJSON(w, status, apiError{why})
			return
		}
		// A query that does not parse, or names a parameter the API does
		// not read, is refused whole: a filter or key dropped without a
		// word (url.Values drops a pair it cannot read; a misspelt name is
		// never read) would pick every call, or forget every key.
		q, err := url.ParseQuery(r.URL.RawQuery)
		if err != nil {
			writeJSON(w, http.StatusBadRequest, apiError{"the query does not parse: " + safetext.Clip(err.Error(), 200)})
			return
		}
		for name := range q {
			if strings.HasPrefix(r.URL.Path, "/_fgrl/api/") && !slices.Contains(queryNames, name) {
				writeJSON(w, http.StatusBadRequest, apiError{"no query parameter " + safetext.Quote(name, 40) + " (the API reads " +
					strings.Join(queryNames[:len(queryNames)-1], ", ") + " and " + queryNames[len(queryNames)-1] + ")"})
				return
			}
		}
		mux.ServeHTTP(w, r)
	})
}

// notServed answers in the API's JSON, not the ServeMux's text, what no
// endpoint serves: a method an endpoint's path does not take (405, with
// Allow), a path under Prefix no endpoint has, and /metrics when no
// Metrics handler was given (404).
func notServed(mux *http.ServeMux, metrics bool) {
	allow := map[string][]string{}
	patterns := make([]string, 0, len(endpoints)+1)
	for _, e := range endpoints {
		patterns = append(patterns, e.pattern)
	}
	if metrics {
		patterns = append(patterns, metricsPattern)
	}
	for _, p := range patterns {
		method, path, _ := strings.Cut(p, " ")
		allow[path] = append(allow[path], method)
		if method == http.MethodGet {
			allow[path] = append(allow[path], http.MethodHead)
		}
	}
	for path, methods := range allow {
		allowed := strings.Join(methods, ", ")
		shown := strings.TrimSuffix(path, "{$}")
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", allowed)
			writeJSON(w, http.StatusMethodNotAllowed, apiError{shown + " takes " + allowed + ", not " + safetext.Quote(r.Method, 20)})
		})
	}
	missing := func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, apiError{"no admin endpoint at " + safetext.Quote(r.URL.Path, 80)})
	}
	mux.HandleFunc(Prefix, missing)
	if !metrics {
		mux.HandleFunc("/metrics", missing)
	}
}

// queryNames are the query parameters the API reads: the calls' filter,
// a key's fields, and the token (the live page passes it on).
var queryNames = []string{"method", "host", "path", "scope", "xuid", "user", "title", "status", "since", "script", "token"}

// WithServices returns a handler that serves both h's services and its
// admin endpoints (Handler(h, c)) on one address, as xblcall mock does: a
// request whose path is /metrics or starts with Prefix goes to the latter.
func WithServices(h *mock.Handler, c Config) http.Handler {
	admin := Handler(h, c)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" || strings.HasPrefix(r.URL.Path, Prefix) {
			admin.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// metricsPattern is Config.Metrics' endpoint.
const metricsPattern = "GET /metrics"

// endpoints are the admin endpoints, by their http.ServeMux patterns; the
// package doc lists each (TestDocListsEveryEndpoint).
var endpoints = []struct {
	pattern string
	serve   func(a *admin, w http.ResponseWriter, r *http.Request)
}{
	{"GET " + Prefix + "{$}", (*admin).page},
	{"GET " + Prefix + "events", (*admin).events},
	{"GET " + Prefix + "api/ready", (*admin).ready},
	{"POST " + Prefix + "api/reset", (*admin).reset},
	{"GET " + Prefix + "api/keys", (*admin).keys},
	{"DELETE " + Prefix + "api/keys", (*admin).resetKeys},
	{"GET " + Prefix + "api/faults", (*admin).faults},
	{"PUT " + Prefix + "api/faults", (*admin).setFaults},
	{"DELETE " + Prefix + "api/faults", (*admin).endFaults},
	{"GET " + Prefix + "api/world", (*admin).world},
	{"PUT " + Prefix + "api/world", (*admin).setWorld},
	{"DELETE " + Prefix + "api/world", (*admin).defaultWorld},
	{"POST " + Prefix + "api/world/reset", (*admin).resetWorld},
	{"GET " + Prefix + "api/script", (*admin).script},
	{"PUT " + Prefix + "api/script", (*admin).setScript},
	{"DELETE " + Prefix + "api/script", (*admin).endScript},
	{"GET " + Prefix + "api/calls", func(a *admin, w http.ResponseWriter, r *http.Request) { a.exportCalls(w, r, false) }},
	{"GET " + Prefix + "api/calls.har", func(a *admin, w http.ResponseWriter, r *http.Request) { a.exportCalls(w, r, true) }},
	{"DELETE " + Prefix + "api/calls", (*admin).forgetCalls},
	{"POST " + Prefix + "api/check", (*admin).check},
}

// admin is one Handler's endpoints: the mock they serve, and the state
// they share, each bounded: the exports of the calls being read, the event
// streams open and the overview they all send.
type admin struct {
	h       *mock.Handler
	exports atomic.Int32
	streams atomic.Int32

	mu   sync.Mutex // guards at and data
	at   time.Time  // when data was encoded (runtime clock)
	data []byte     // the overview of this tick, as JSON
}

// apiError is every error the admin endpoints answer.
type apiError struct {
	Error string `json:"error"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":"encoding failed"}`)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(b)
}

// decodeReason is a JSON decoder's error up to the first input it quotes,
// so no fragment of a request's body reaches the answer.
func decodeReason(err error) string {
	return safetext.Reason(strings.TrimPrefix(err.Error(), "json: "), 120)
}
