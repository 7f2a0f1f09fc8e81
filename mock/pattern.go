package mock

import (
	"fmt"
	"net/http"
	"net/url"
	pathpkg "path"
	"strconv"
	"strings"

	"github.com/xblgo/fgrl/internal/xblid"
)

// pattern is a served path as the services' documentation writes it:
// literal segments, matched ignoring ASCII case as the services do, and the
// captures
//
//	{}        any non-empty segment
//	{user}    "me" or "xuid(N)", N a XUID; the whole segment
//	xuid({n}) "xuid(N)"; the digits only
//
// http.ServeMux does the matching (see router); a pattern is its ServeMux
// form and what each segment captures.
type pattern struct {
	mux  string     // the ServeMux pattern: literals lower-cased, captures {w0}, {w1}, ...
	segs []elemKind // per segment
}

type elemKind uint8

const (
	literal elemKind = iota
	anySeg
	userSeg
	xuidSeg
)

// maxParams bounds a pattern's captures: call keeps them in an array.
const maxParams = 4

// pat parses a pattern written as above; it panics on a malformed one, as
// regexp.MustCompile does, since patterns are constants of this package.
func pat(p string) pattern {
	if !strings.HasPrefix(p, "/") {
		panic(fmt.Sprintf("mock: malformed path pattern %q", p))
	}
	var out pattern
	var mux strings.Builder
	for _, s := range strings.Split(p[1:], "/") {
		kind := map[string]elemKind{"{}": anySeg, "{user}": userSeg, "xuid({n})": xuidSeg}[s]
		mux.WriteString("/")
		if kind == literal {
			if s == "" || strings.ContainsAny(s, "{}") {
				panic(fmt.Sprintf("mock: malformed path pattern %q", p))
			}
			mux.WriteString(lowerASCII(s))
		} else {
			mux.WriteString("{w" + strconv.Itoa(len(out.segs)) + "}")
		}
		out.segs = append(out.segs, kind)
	}
	if out.captures() > maxParams {
		panic(fmt.Sprintf("mock: path pattern %q captures more than %d segments", p, maxParams))
	}
	out.mux = mux.String()
	return out
}

func (p pattern) captures() int {
	n := 0
	for _, k := range p.segs {
		if k != literal {
			n++
		}
	}
	return n
}

// capture appends to dst what path's segments capture, as p says, and
// reports whether each is what its capture takes; path has matched p.
func (p pattern) capture(path string, dst []string) ([]string, bool) {
	rest := path[1:]
	for _, k := range p.segs {
		seg, tail, _ := strings.Cut(rest, "/")
		rest = tail
		switch k {
		case anySeg:
			dst = append(dst, seg)
		case userSeg:
			if !strings.EqualFold(seg, "me") && xuidDigits(seg) == "" {
				return dst, false
			}
			dst = append(dst, seg)
		case xuidSeg:
			n := xuidDigits(seg)
			if n == "" {
				return dst, false
			}
			dst = append(dst, n)
		}
	}
	return dst, true
}

// router routes the requests of one service: http.ServeMux finds the
// pattern that fits the path lower-cased in ASCII, and the captures are
// taken from the path as sent.
type router struct {
	mux   *http.ServeMux
	paths map[string][]route // by ServeMux pattern: the routes of one path, a method each
}

func newRouter(routes []route) *router {
	rt := &router{mux: http.NewServeMux(), paths: map[string][]route{}}
	for _, r := range routes {
		if _, ok := rt.paths[r.path.mux]; !ok {
			rt.mux.Handle(r.path.mux, http.NotFoundHandler()) // only its pattern is used
		}
		rt.paths[r.path.mux] = append(rt.paths[r.path.mux], r)
	}
	return rt
}

// match returns the routes of the path, one per method, with its captures
// appended to dst; none when no pattern fits.
func (rt *router) match(path string, dst []string) ([]route, []string) {
	// ServeMux would answer a path that is not clean ("//", "/../", a
	// trailing slash) with a redirect to the clean one; the services answer
	// 404, and so do we.
	if !strings.HasPrefix(path, "/") || pathpkg.Clean(path) != path {
		return nil, dst
	}
	_, p := rt.mux.Handler(&http.Request{Method: http.MethodGet, URL: &url.URL{Path: lowerASCII(path)}})
	routes := rt.paths[p]
	if len(routes) == 0 {
		return nil, dst
	}
	dst, ok := routes[0].path.capture(path, dst)
	if !ok {
		return nil, dst
	}
	return routes, dst
}

// lowerASCII lower-cases the ASCII letters of s only, so that every byte
// keeps its place (strings.ToLower may change a string's length).
func lowerASCII(s string) string {
	i := strings.IndexFunc(s, func(r rune) bool { return 'A' <= r && r <= 'Z' })
	if i < 0 {
		return s
	}
	b := []byte(s)
	for ; i < len(b); i++ {
		if 'A' <= b[i] && b[i] <= 'Z' {
			b[i] += 'a' - 'A'
		}
	}
	return string(b)
}

// xuidDigits returns N of a segment "xuid(N)" (any case), N a XUID
// (xblid.CheckXUID: decimal, 64 bits), or "".
func xuidDigits(seg string) string {
	const open = "xuid("
	if len(seg) < len(open)+2 || !strings.EqualFold(seg[:len(open)], open) || seg[len(seg)-1] != ')' {
		return ""
	}
	n := seg[len(open) : len(seg)-1]
	if xblid.CheckXUID(n) != nil {
		return ""
	}
	return n
}
