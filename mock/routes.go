package mock

import (
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"strings"

	"github.com/xblgo/fgrl/limits"
)

// route is one served call: a method and a path pattern whose groups are
// passed to serve.
type route struct {
	method string
	path   *regexp.Regexp
	serve  func(h *Handler, c *call)
}

// call is one request being served.
type call struct {
	w      http.ResponseWriter
	r      *http.Request
	id     identity
	params []string // the path pattern's groups
}

// user resolves a "me" or "xuid(N)" path segment to an xuid.
func (c *call) user(seg string) string {
	if strings.EqualFold(seg, "me") {
		return c.id.xuid
	}
	if s, ok := strings.CutPrefix(strings.ToLower(seg), "xuid("); ok {
		return strings.TrimSuffix(s, ")")
	}
	return seg
}

// decode reads a JSON body into v; on failure it answers 400 or 413 and
// returns false.
func (c *call) decode(h *Handler, v any) bool {
	body := http.MaxBytesReader(c.w, c.r.Body, h.cfg.maxBody)
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

const userSeg = `(me|xuid\(\d{1,20}\))`

func re(p string) *regexp.Regexp { return regexp.MustCompile(`(?i)^` + p + `$`) }

// routes returns the served calls, by the Service of the rule a host maps to.
func routes() map[string][]route {
	return map[string][]route{
		"profile":            profileRoutes(),
		"presence":           presenceRoutes(),
		"social":             socialRoutes(),
		"achievements":       achievementRoutes(),
		"stats-read":         statsRoutes(),
		"leaderboards":       leaderboardRoutes(),
		"mpsd":               mpsdRoutes(),
		"mpsd-search-handle": searchHandleRoutes(),
		"smartmatch":         smartmatchRoutes(),
		"privacy":            privacyRoutes(),
		"reputation":         reputationRoutes(),
	}
}

// route serves an admitted request: 404 for an unknown path, 405 for a known
// path with another method.
func (h *Handler) route(w http.ResponseWriter, r *http.Request, rule *limits.Rule, id identity) {
	var allow []string
	for _, rt := range h.routes[rule.Service] {
		m := rt.path.FindStringSubmatch(r.URL.Path)
		if m == nil {
			continue
		}
		if rt.method != r.Method {
			allow = append(allow, rt.method)
			continue
		}
		rt.serve(h, &call{w: w, r: r, id: id, params: m[1:]})
		return
	}
	if len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		writeError(w, http.StatusMethodNotAllowed, "MethodNotAllowed", r.Method+" is not supported here")
		return
	}
	writeError(w, http.StatusNotFound, "NotFound", "no such resource")
}
