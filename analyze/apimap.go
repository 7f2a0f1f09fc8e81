package analyze

import (
	_ "embed"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// The trace analyzer's endpoint-to-API map, as data: which XSAPI functions
// make each call (data/apimap.json names its source).
//
//go:embed data/apimap.json
var apiMapJSON []byte

// apiMap is the compiled map: per host, its service's name and endpoints.
type apiMap struct {
	hosts map[string]*hostAPIs
	names [][]string // endpoint id -> its functions, "C (C++)"
}

type hostAPIs struct {
	service   string // the host's service: its functions' names, as "XblProfile*"
	endpoints []endpoint
}

type endpoint struct {
	id      int
	method  string
	path    *regexp.Regexp
	literal int // the template's characters outside placeholders
}

var loadAPIMap = sync.OnceValue(func() *apiMap {
	var doc struct {
		Services  []struct{ Host, C, CPP string } `json:"services"`
		Endpoints []struct {
			Method, Host, Path, C, CPP string
		} `json:"endpoints"`
	}
	if err := json.Unmarshal(apiMapJSON, &doc); err != nil {
		panic("analyze: data/apimap.json: " + err.Error()) // embedded: a test catches it
	}
	m := &apiMap{hosts: map[string]*hostAPIs{}}
	host := func(h string) *hostAPIs {
		h = strings.ToLower(h)
		if m.hosts[h] == nil {
			m.hosts[h] = &hostAPIs{}
		}
		return m.hosts[h]
	}
	for _, s := range doc.Services {
		host(s.Host).service = s.C + "*" // every function of the service's C API
		if s.C == "" {
			host(s.Host).service = s.CPP + "::*"
		}
	}
	ids := map[string]int{} // one endpoint per method, host and path: its functions together
	for _, e := range doc.Endpoints {
		k := strings.ToLower(e.Method + " " + e.Host + e.Path)
		if id, ok := ids[k]; ok {
			m.names[id] = append(m.names[id], apiName(e.C, e.CPP))
			continue
		}
		ids[k] = len(m.names)
		h := host(e.Host)
		literal := len(placeholder.ReplaceAllString(e.Path, ""))
		h.endpoints = append(h.endpoints, endpoint{id: len(m.names), method: e.Method, path: pathPattern(e.Path), literal: literal})
		m.names = append(m.names, []string{apiName(e.C, e.CPP)})
	}
	for _, h := range m.hosts { // the most specific template first: a blob's download before its folder's listing
		slices.SortStableFunc(h.endpoints, func(a, b endpoint) int { return b.literal - a.literal })
	}
	return m
})

// apiName names a function by its C API name, with the C++ one beside it.
func apiName(c, cpp string) string {
	switch {
	case c == "":
		return cpp
	case cpp == "":
		return c
	}
	return c + " (" + cpp + ")"
}

// placeholder is a {name} in a path template.
var placeholder = regexp.MustCompile(`\{[^}]*\}`)

// pathPattern compiles a path template: {name} matches within one segment,
// {path} (title storage's blob path) across segments; case is ignored, as
// the services ignore it, and so is a trailing slash.
func pathPattern(t string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("(?i)^")
	last := 0
	for _, loc := range placeholder.FindAllStringIndex(t, -1) {
		b.WriteString(regexp.QuoteMeta(t[last:loc[0]]))
		if t[loc[0]:loc[1]] == "{path}" {
			b.WriteString(".+")
		} else {
			b.WriteString("[^/]+")
		}
		last = loc[1]
	}
	b.WriteString(regexp.QuoteMeta(t[last:]))
	b.WriteString("/?$")
	return regexp.MustCompile(b.String())
}

// endpointOf returns the id of the endpoint a call is, or -1.
func (m *apiMap) endpointOf(method, host, path string) int {
	h := m.hosts[strings.ToLower(host)]
	if h == nil {
		return -1
	}
	for _, e := range h.endpoints {
		if strings.EqualFold(e.method, method) && e.path.MatchString(path) {
			return e.id
		}
	}
	return -1
}

// apisOf names the functions of a set of endpoint ids, or the host's
// service when none is known: sorted, without repeats.
func (m *apiMap) apisOf(ids []int16, host string) []string {
	var out []string
	for _, id := range ids {
		out = append(out, m.names[id]...)
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) == 0 {
		if h := m.hosts[strings.ToLower(host)]; h != nil && h.service != "" {
			out = []string{h.service}
		}
	}
	return out
}

// apiNames names the functions behind findings, each list made once: per
// group, and per URL a finding quotes.
type apiNames struct {
	byURL map[string][]string
}

// name sets the APIs of g's findings: those of the URL a finding quotes
// ("METHOD hostpath", as Finding.URL) when the map knows its endpoint, else
// those of every endpoint g called.
func (n *apiNames) name(g *group, found []Finding) {
	m := loadAPIMap()
	var mine []string
	for i := range found {
		f := &found[i]
		if f.URL != "" {
			apis, ok := n.byURL[f.URL]
			if !ok {
				method, rest, _ := strings.Cut(f.URL, " ")
				_, host, p := splitURL("https://" + rest)
				if id := m.endpointOf(method, host, p); id >= 0 {
					apis = m.apisOf([]int16{int16(id)}, host)
				}
				n.byURL[f.URL] = apis
			}
			if apis != nil {
				f.APIs = apis
				continue
			}
		}
		if mine == nil {
			mine = m.apisOf(g.apis, g.host)
		}
		f.APIs = mine
	}
}
