package mock

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/xblgo/fgrl/limits"
)

// A service answers one Xbox service's calls: its routes, each answered
// from the world alone. Every service is a value holding a *world and
// nothing else, so it reads and writes its part of the world and cannot
// reach the Handler.
type service interface {
	routes() []route
}

// services returns the services the mock answers, by the Service of the
// limits rules whose hosts they answer at.
func services(w *world) map[string]service {
	return map[string]service{
		"profile":            profileService{w},
		"presence":           presenceService{w},
		"social":             socialService{w},
		"peoplehub":          peopleHubService{w},
		"titlehub":           titleHubService{w},
		"achievements":       achievementsService{w},
		"stats-read":         statsService{w},
		"leaderboards":       leaderboardsService{w},
		"mpsd":               mpsdService{w},
		"mpsd-search-handle": searchHandleService{w},
		"smartmatch":         smartmatchService{w},
		"privacy":            privacyService{w},
		"reputation":         reputationService{w},
		"usersearch":         userSearchService{w},
	}
}

// route is one served call: a method and a path pattern whose captures are
// passed to serve, and the x-xbl-contract-version whose shape the answer
// has (the one XSAPI sends).
type route struct {
	method   string
	path     pattern
	serve    func(c *call)
	contract string
}

// call is one request being served.
type call struct {
	w       http.ResponseWriter
	r       *http.Request
	id      identity
	params  []string // the path pattern's captures
	buf     [maxParams]string
	q       url.Values // the query, once parsed
	maxBody int64      // Config.MaxBody
}

// user resolves a "me" or "xuid(N)" path segment to an xuid.
func (c *call) user(seg string) string {
	if strings.EqualFold(seg, "me") {
		return c.id.xuid
	}
	return xuidDigits(seg) // the route's pattern has checked the segment
}

// query returns the first value of a query parameter (r.URL.Query, parsed
// once per call).
func (c *call) query(key string) string {
	if c.q == nil {
		c.q = c.r.URL.Query()
	}
	return c.q.Get(key)
}

// decode reads a JSON body into v; on failure it answers 400 or 413 and
// returns false.
func (c *call) decode(v any) bool {
	body := http.MaxBytesReader(c.w, c.r.Body, c.maxBody)
	err := json.NewDecoder(body).Decode(v)
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		writeError(c.w, http.StatusRequestEntityTooLarge, "RequestTooLarge", "request body over the limit")
	case err != nil:
		writeError(c.w, http.StatusBadRequest, "BadRequest", "malformed JSON body: "+err.Error())
	default:
		return true
	}
	return false
}

// routesOf returns every service's routes, by the service's name.
func routesOf(svcs map[string]service) map[string][]route {
	out := make(map[string][]route, len(svcs))
	for name, s := range svcs {
		out[name] = s.routes()
	}
	return out
}

// match finds the route that serves c's request, with its captures in
// c.params; nil when none does.
func (h *Handler) match(c *call, rule *limits.Rule) *route {
	for i, rt := range h.routes[rule.Service] {
		params, ok := rt.path.match(c.r.URL.Path, c.buf[:0])
		if ok && rt.method == c.r.Method {
			c.params = params
			return &h.routes[rule.Service][i]
		}
	}
	return nil
}

// notServed answers a request no route serves: 405 with Allow for a known
// path with another method, 404 otherwise.
func (h *Handler) notServed(w http.ResponseWriter, r *http.Request, rule *limits.Rule) {
	var allow []string
	var buf [maxParams]string
	for _, rt := range h.routes[rule.Service] {
		if _, ok := rt.path.match(r.URL.Path, buf[:0]); ok {
			allow = append(allow, rt.method)
		}
	}
	if len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		writeError(w, http.StatusMethodNotAllowed, "MethodNotAllowed", r.Method+" is not supported here")
		return
	}
	writeError(w, http.StatusNotFound, "NotFound", "no such resource")
}
