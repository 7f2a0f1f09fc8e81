package mock

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/internal/xblid"
)

// What a service is made of: its routes (a method and a path pattern
// each), the call a route answers (the request, its captures, the caller)
// and the writers of its answers. The pipeline (pipeline.go) matches a
// request to its route and hands the route the call.

// call is one request as a route answers it: the request, the captures
// of the route's pattern, the caller.
type call struct {
	w       http.ResponseWriter
	r       *http.Request
	id      identity // the caller (parseToken)
	params  []string // the route's captures
	buf     [maxParams]string
	maxBody int64 // Config.MaxBody
}

// user resolves a "me" or "xuid(N)" path segment to an xuid.
func (c *call) user(seg string) string {
	if safetext.EqualFoldASCII(seg, "me") {
		return c.id.xuid
	}
	return xuidDigits(seg) // the route's pattern has checked the segment
}

// query returns the first value of a query parameter, as
// r.URL.Query().Get(key) would, without building the map a route reads
// one or two values of (queryValue).
func (c *call) query(key string) string { return queryValue(c.r.URL.RawQuery, key) }

// queryValue is url.ParseQuery(raw).Get(key): the first pair of raw named
// key, skipping the pairs ParseQuery refuses (a semicolon, an escape that
// does not decode).
func queryValue(raw, key string) string {
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		if pair == "" || strings.Contains(pair, ";") {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		k, err := url.QueryUnescape(k)
		if err != nil || k != key {
			continue
		}
		if v, err = url.QueryUnescape(v); err == nil {
			return v
		}
	}
	return ""
}

// decode reads a JSON body into v, whole: a body over Config.MaxBody is
// answered 413 even when its JSON value ends before the bound, and one
// with anything but white space after its value 400; on failure it
// answers and returns false.
func (c *call) decode(v any) bool {
	body := http.MaxBytesReader(c.w, c.r.Body, c.maxBody)
	dec := json.NewDecoder(body)
	err := dec.Decode(v)
	if err == nil {
		// The rest, to its end within the bound: only white space.
		var extra json.RawMessage
		if err = dec.Decode(&extra); err == io.EOF {
			err = nil
		} else if err == nil {
			err = errors.New("more JSON after the body's value")
		}
	}
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

// errorBody is the JSON error answer, in the shape Xbox services use.
type errorBody struct {
	Code        string `json:"code"`
	Description string `json:"description"`
}

func writeError(w http.ResponseWriter, status int, code, desc string) {
	writeJSON(w, status, errorBody{Code: code, Description: desc})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"code":"InternalError","description":"encoding failed"}`)
	}
	writeRaw(w, status, b)
}

// jsonType is the Content-Type of every JSON answer, shared rather than
// built per answer (net/http only reads it; an Add would copy it, as its
// capacity is its length).
var jsonType = []string{"application/json; charset=utf-8"}

// writeRaw answers a JSON document already encoded.
func writeRaw(w http.ResponseWriter, status int, b []byte) {
	w.Header()["Content-Type"] = jsonType
	w.WriteHeader(status)
	w.Write(b)
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

// matchRoute finds the route of routes that serves c's request, with its
// captures in c.params; nil when none does.
func matchRoute(routes []route, c *call) *route {
	for i := range routes {
		params, ok := routes[i].path.match(c.r.URL.Path, c.buf[:0])
		if ok && routes[i].method == c.r.Method {
			c.params = params
			return &routes[i]
		}
	}
	return nil
}

// notServed answers a request no route serves: 405 with Allow for a known
// path with another method, 404 otherwise.
func notServed(routes []route, c *call) {
	var allow []string
	var buf [maxParams]string
	for _, rt := range routes {
		if _, ok := rt.path.match(c.r.URL.Path, buf[:0]); ok {
			allow = append(allow, rt.method)
		}
	}
	if len(allow) > 0 {
		c.w.Header().Set("Allow", strings.Join(allow, ", "))
		writeError(c.w, http.StatusMethodNotAllowed, "MethodNotAllowed", c.r.Method+" is not supported here")
		return
	}
	writeError(c.w, http.StatusNotFound, "NotFound", "no such resource")
}

// pattern is a served path, one element per path segment, matched without
// regular expressions (the route match is on every request's path). It is
// kept instead of http.ServeMux, which matches case-sensitively: ServeMux on
// the path lowered in ASCII held the mock under its 0.7x target under wrk
// (docs/ARCHITECTURE.md). An
// element is a literal segment, matched ignoring ASCII case as the services
// do, or one of the captures:
//
//	{}        any non-empty segment
//	{user}    "me" or "xuid(N)", N a XUID; the whole segment
//	xuid({n}) "xuid(N)"; the digits only
//	gt({})    "gt(G)", G a gamertag; G only
type pattern []element

type element struct {
	kind    elemKind
	literal string
}

type elemKind uint8

const (
	literal elemKind = iota
	anySeg
	userSeg
	xuidSeg
	gtSeg
)

// maxParams bounds a pattern's captures: call keeps them in an array.
const maxParams = 4

// pat parses a pattern written as above; it panics on a malformed one, as
// regexp.MustCompile does, since patterns are constants of this package.
func pat(p string) pattern {
	segs := strings.Split(strings.TrimPrefix(p, "/"), "/")
	out := make(pattern, 0, len(segs))
	captures := 0
	for _, s := range segs {
		e := element{kind: literal, literal: s}
		switch s {
		case "{}":
			e = element{kind: anySeg}
		case "{user}":
			e = element{kind: userSeg}
		case "xuid({n})":
			e = element{kind: xuidSeg}
		case "gt({})":
			e = element{kind: gtSeg}
		}
		if e.kind != literal {
			captures++
		}
		if !strings.HasPrefix(p, "/") || s == "" || (e.kind == literal && strings.ContainsAny(s, "{}")) || captures > maxParams {
			panic(fmt.Sprintf("mock: malformed path pattern %q", p))
		}
		out = append(out, e)
	}
	return out
}

// match reports whether path fits p, appending its captures to dst.
func (p pattern) match(path string, dst []string) ([]string, bool) {
	if path == "" || path[0] != '/' {
		return dst, false
	}
	rest := path[1:]
	for i, e := range p {
		seg, tail, more := strings.Cut(rest, "/")
		if more == (i == len(p)-1) { // too many segments, or too few
			return dst, false
		}
		rest = tail
		switch e.kind {
		case literal:
			if !safetext.EqualFoldASCII(seg, e.literal) {
				return dst, false
			}
		case anySeg:
			if seg == "" {
				return dst, false
			}
			dst = append(dst, seg)
		case userSeg:
			if !safetext.EqualFoldASCII(seg, "me") && xuidDigits(seg) == "" {
				return dst, false
			}
			dst = append(dst, seg)
		case xuidSeg:
			n := xuidDigits(seg)
			if n == "" {
				return dst, false
			}
			dst = append(dst, n)
		case gtSeg:
			g, ok := gamertagOfSegment(seg)
			if !ok {
				return dst, false
			}
			dst = append(dst, g)
		}
	}
	return dst, true
}

// gamertagOfSegment returns G of a segment "gt(G)" (any case), G not
// empty.
func gamertagOfSegment(seg string) (string, bool) {
	const open = "gt("
	if len(seg) < len(open)+2 || !safetext.EqualFoldASCII(seg[:len(open)], open) || seg[len(seg)-1] != ')' {
		return "", false
	}
	return seg[len(open) : len(seg)-1], true
}

// xuidDigits returns N of a segment "xuid(N)" (any case), N a XUID
// (xblid.CheckXUID: decimal, 64 bits), or "".
func xuidDigits(seg string) string {
	const open = "xuid("
	if len(seg) < len(open)+2 || !safetext.EqualFoldASCII(seg[:len(open)], open) || seg[len(seg)-1] != ')' {
		return ""
	}
	n := seg[len(open) : len(seg)-1]
	if xblid.CheckXUID(n) != nil {
		return ""
	}
	return n
}
