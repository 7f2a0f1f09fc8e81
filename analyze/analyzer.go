package analyze

import (
	"cmp"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"math"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/internal/xblauth"
	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/ratelimit"
)

// maxURLBytes bounds the URLs findings quote, which an Analyzer keeps
// beside its ~40 bytes per call.
const maxURLBytes = 8 << 20

// Analyzer analyzes calls as they are added; Report gives the result. It is
// not safe for concurrent use.
type Analyzer struct {
	limits *limits.Limits
	rules  *Rules
	// unlimited is the rule of a judged host the limits have neither a
	// rule nor a fallback for: no limits (so no call-frequency finding).
	unlimited limits.Rule

	users      map[string]int32
	userInfo   []userInfo
	groups     map[groupKey]*group
	order      []*group
	hosts      map[string]string       // the hosts groups keep (keptHost)
	hostScopes map[string]string       // fallback scopes by host (hostScope)
	ruleScopes map[*limits.Rule]string // (ruleScope)
	apart      map[string]*hostTally   // calls not judged, by host
	noToken    map[string]*hostTally   // calls without a token, by host
	realtime   int
	// realtimeMessages are the websocket messages of the real-time
	// sockets, as a HAR recorded them.
	realtimeMessages int
	inputs           []Input
	offset           int // added to Call.Index, across inputs
	calls            int
	urls             map[uint64]string
	// full is each long group's chunks filled before its recs, encoded
	// (Analyzer.add). It is kept here, not in the group, so that a group
	// of a few calls stays small (96 bytes: a trace of a user per call has
	// a group per call).
	full       map[*group][][]byte
	scratch    []byte // a chunk being encoded
	urlBytes   int
	seed       maphash.Seed          // of callKey
	shapes     map[string]int16      // a call's shape (shapeOf) -> its endpoint in the API map, -1 for none
	samples    map[string]*sampleUse // PlayFab calls for a sample title ID, by ID
	events     map[int32][]eventRec  // in-game events by user (-1: no token), at their own times
	eventCount int
	// over is the first call of the input being read not judged whole,
	// past maxCalls calls or maxEvents events (overN counts them).
	over                *Problem
	overN               int
	maxCalls, maxEvents int // MaxCalls and MaxEvents, lowered by tests
}

// sampleUse is the PlayFab calls made for one sample title ID.
type sampleUse struct {
	calls    int
	evidence []Evidence
}

type groupKey struct {
	user  int32
	scope string
}

// group is one user's calls under one rule of the limits.
type group struct {
	user  int32
	scope string
	host  string
	rule  *limits.Rule
	recs  []rec   // its calls: while they are added, the newest chunk (Analyzer.add)
	apis  []int16 // the endpoints of the API map its calls were, each once
}

// recChunk is the most calls a group keeps as recs while calls are added;
// when they fill a chunk it is encoded (encodeRecs: about 9 bytes a call
// of a group's usual calls, against a rec's 32) and kept in
// Analyzer.full. A group's open chunk has at most recChunk places (2
// KiB), where a slice grown by append has up to as much room unused as in
// use.
const recChunk = 64

// add appends r to g's calls.
func (a *Analyzer) add(g *group, r rec) {
	if len(g.recs) == cap(g.recs) && cap(g.recs) >= recChunk {
		if a.full == nil {
			a.full = make(map[*group][][]byte)
		}
		a.scratch = encodeRecs(a.scratch[:0], g.recs)
		a.full[g] = append(a.full[g], slices.Clone(a.scratch))
		g.recs = g.recs[:0]
	}
	g.recs = append(g.recs, r)
}

// callsOf returns g's calls sorted by time (stably: calls of one instant in
// the order they were added), for the rules to read: a slice of their own
// when g has filled chunks, which the caller lets go when it has judged
// them, so that a report holds one long group's calls as recs at a time.
func (a *Analyzer) callsOf(g *group) []rec {
	full := a.full[g]
	recs := g.recs
	if len(full) > 0 {
		recs = make([]rec, 0, len(full)*recChunk+len(g.recs))
		for _, c := range full {
			var err error
			if recs, err = decodeRecs(recs, c); err != nil {
				panic(err) // encodeRecs wrote it: FuzzRecChunk
			}
		}
		recs = append(recs, g.recs...)
	}
	slices.SortStableFunc(recs, func(x, y rec) int { return cmp.Compare(x.at, y.at) })
	return recs
}

// status16 is a call's status as a rec keeps it: -1 for one that is not 0
// nor from 100 to 999 (the readers give none such), never wrapped into 16
// bits, where 65965 would read as 429.
func status16(s int) int16 {
	if s != 0 && (s < 100 || s > 999) {
		return -1
	}
	return int16(s)
}

// rec is what the rules need of one call.
type rec struct {
	at     int64  // Unix nanoseconds
	key    uint64 // hash of method, URL and request body
	index  int32  // in the whole analysis
	ra     int32  // milliseconds from at until a 429's Retry-After passed (raWait); -1 for none
	status int16  // status16
	users  int16  // users a batch call lists; -1 when not a batch call
	batch  int8   // 1 + index of the batch rule; 0 for none
	social bool   // Social Manager's call: exempt from polling, repeated-call and small-batch
	// answer is the milliseconds from at until a 429's answer arrived (at
	// most maxRAWait): a call sent before it does not follow the 429, and
	// ra less answer is the wait the answer gave, which the findings quote
	// (raText).
	answer uint32
}

// New returns an Analyzer judging calls under lim (nil: the built-in 2020
// table) and rules (nil: DefaultRules).
func New(lim *limits.Limits, rules *Rules) (*Analyzer, error) {
	if lim == nil {
		lim = limits.Default()
	}
	if rules == nil {
		rules = DefaultRules()
	} else if err := rules.check(); err != nil {
		return nil, err
	}
	return &Analyzer{limits: lim, rules: rules, users: map[string]int32{}, groups: map[groupKey]*group{},
		hosts: map[string]string{}, hostScopes: map[string]string{}, ruleScopes: map[*limits.Rule]string{},
		apart: map[string]*hostTally{}, noToken: map[string]*hostTally{}, urls: map[uint64]string{}, seed: maphash.MakeSeed(),
		shapes: map[string]int16{}, samples: map[string]*sampleUse{}, events: map[int32][]eventRec{}, maxCalls: MaxCalls, maxEvents: MaxEvents}, nil
}

// AddInput records what a reader made of a trace (its problems and where
// it stopped) and moves the call indexes of the next trace past its calls.
// Calls of the trace the Analyzer could not judge (past MaxCalls or
// MaxEvents) are where the trace stopped, if the reader had not.
func (a *Analyzer) AddInput(in Input) {
	if p := a.overProblem(); p != nil && in.Stop == nil {
		in.Truncated, in.Stop = p.Reason, p
	} else if p != nil {
		in.problem(p.Index, p.Offset, "%s", p.Reason)
	}
	a.over, a.overN = nil, 0
	a.inputs = append(a.inputs, in)
	a.offset = a.calls
}

// passOver notes that c is not judged whole: past the bound of what.
func (a *Analyzer) passOver(c *Call, what string, bound int) {
	if a.overN++; a.over == nil {
		off := c.Offset
		if off == 0 {
			off = -1 // not read from a trace
		}
		a.over = &Problem{Index: c.Index, Offset: off, Reason: fmt.Sprintf("the analysis holds at most %d %s", bound, what)}
	}
}

// overProblem returns the first call not judged since the last input, if
// any, its reason counting them all.
func (a *Analyzer) overProblem() *Problem {
	if a.over == nil {
		return nil
	}
	p := *a.over
	p.Reason = fmt.Sprintf("%s: %d from here on not judged", p.Reason, a.overN)
	return &p
}

// Add analyzes one call. It keeps no reference to c.
func (a *Analyzer) Add(c *Call) {
	if a.calls >= a.maxCalls {
		a.passOver(c, "calls", a.maxCalls)
		return
	}
	a.calls++
	scheme, host, p := splitURL(c.URL)
	if realtime(scheme, host, c) {
		a.realtime++ // real-time activity: a subscription socket or a tap, not calls
		a.realtimeMessages += c.WebSocketMessages
		return
	}
	a.sampleTitle(c, host)
	if c.InGameEvent != "" {
		a.addEvent(c)
		return
	}
	if eventsHost(host) {
		a.addEvents(c, host) // uploads of in-game events: the events are judged, not the uploads
		a.notJudged(c, host)
		return
	}
	rule, scope, ok := a.ruleOf(c, host, p)
	if !ok {
		a.notJudged(c, host)
		return
	}
	r := a.rec(c)
	uhs, ok := userOf(c.Authorization)
	if !ok {
		a.tokenless(host, r)
		return
	}
	u := a.user(uhs)
	a.learnIdentity(u, host, p, c)
	g := a.group(u, scope, host, rule)
	r.social = strings.Contains(c.UserAgent, "SocialManager")
	if i, b := a.rules.batchOf(host, p); b != nil {
		r.batch, r.users = int8(i+1), batchUsers(c.RequestBody, b.Field)
	}
	r.key = callKey(a.seed, c)
	a.keepURL(r.key, c.Method, host, p)
	a.add(g, r)
	if id := a.endpoint(c.Method, host, p); id >= 0 && !slices.Contains(g.apis, id) {
		g.apis = append(g.apis, id)
	}
}

// rec is what the rules need of c before its user is known: its time,
// index, status and a 429's Retry-After.
func (a *Analyzer) rec(c *Call) rec {
	r := rec{at: c.Time.UnixNano(), index: int32(a.offset + c.Index), status: status16(c.Status), ra: -1, users: -1}
	if c.Status == 429 {
		r.ra, r.answer = raWait(c)
	}
	return r
}

// maxRAWait bounds the wait a rec keeps, in milliseconds (24.8 days).
const maxRAWait = math.MaxInt32

// raWait returns how long after its request's start a 429's Retry-After
// passed, in milliseconds rounded up (so a call before an HTTP-date's
// instant is never read as after it), or -1 when it gave none, and when
// the answer arrived (rec.answer), at most maxRAWait. Delay seconds count
// from the answer's arrival (RFC 9110 §10.2.3): the request's start plus
// c.Duration where the trace records it, else the start. An HTTP-date is
// an instant, whenever the answer came: its wait runs from the start, and
// one already past when the answer came is over then. The Retry-After is
// read as at most 24 hours, the whole wait as at most maxRAWait.
func raWait(c *Call) (int32, uint32) {
	got := min(max(c.Duration, 0), maxRAWait*time.Millisecond)
	v := strings.TrimSpace(c.RetryAfter)
	from := c.Time.Add(got) // delay seconds (ParseRetryAfter's first form: a digit first)
	if v != "" && (v[0] < '0' || v[0] > '9') {
		from = c.Time // an HTTP-date
	}
	d, ok := ratelimit.ParseRetryAfter(v, from, 24*time.Hour)
	if !ok {
		return -1, 0
	}
	ceil := func(d time.Duration) time.Duration { return (d + time.Millisecond - 1) / time.Millisecond }
	return int32(min(ceil(from.Sub(c.Time)+d), maxRAWait)), uint32(ceil(got))
}

// sampleTitle notes a PlayFab call for a sample title ID: to
// <id>.playfabapi.com with a User-Agent naming PlayFab.
func (a *Analyzer) sampleTitle(c *Call, host string) {
	id, ok := strings.CutSuffix(host, ".playfabapi.com")
	if !ok || strings.Contains(id, ".") || !strings.Contains(c.UserAgent, "PlayFab") {
		return
	}
	for _, s := range a.rules.SampleTitleIDs {
		if !strings.EqualFold(s, id) {
			continue
		}
		u := a.samples[strings.ToUpper(s)]
		if u == nil {
			u = &sampleUse{}
			a.samples[strings.ToUpper(s)] = u
		}
		u.calls++
		if len(u.evidence) < maxEvidence {
			u.evidence = append(u.evidence, Evidence{Index: a.offset + c.Index, Time: c.Time.UTC(), Status: c.Status})
		}
		return
	}
}

// ruleOf returns the rule a call to host and path p is judged by, and its
// scope: the limits' rule, else for a host the rules judge (or a call with
// the title's own User-Agent) their fallback, or when they have none a
// rule without limits, under which every rule of calls but call-frequency
// judges it; false for a call listed apart.
func (a *Analyzer) ruleOf(c *Call, host, p string) (*limits.Rule, string, bool) {
	if rule, ok := a.limits.Match(c.Method, host, p); ok {
		return rule, a.ruleScope(rule), true
	}
	if own := a.rules.UserAgent != "" && c.UserAgent == a.rules.UserAgent; !own && !a.rules.Judged(host) {
		return nil, "", false
	}
	if a.limits.Fallback != nil {
		return a.limits.Fallback, a.hostScope(host), true
	}
	return &a.unlimited, a.hostScope(host), true
}

// Judged returns the service scope c is judged under, as Add judges it,
// and its user's userhash (or, as a report names it, '#' and a digest of
// one that is not 1 to 20 digits); false for a call Add lists apart or
// does not count as a call: a real-time socket, an in-game event or its
// upload, a host neither the limits nor the rules judge, a call without a
// token.
func (a *Analyzer) Judged(c *Call) (scope, userhash string, ok bool) {
	scheme, host, p := splitURL(c.URL)
	if realtime(scheme, host, c) || c.InGameEvent != "" || eventsHost(host) {
		return "", "", false
	}
	if _, scope, ok = a.ruleOf(c, host, p); !ok {
		return "", "", false
	}
	userhash, ok = userOf(c.Authorization)
	return scope, userhash, ok
}

// realtime reports whether c is real-time activity, which no rate rule
// judges: a websocket (ws, wss, an rta.* host) or a shoulder tap a data
// file recorded (the trace analyzer leaves taps out of its rules too:
// XboxLiveTraceAnalyzer's GatherFirstOrderStats and excess-call checks).
func realtime(scheme, host string, c *Call) bool {
	return scheme == "ws" || scheme == "wss" || strings.HasPrefix(host, "rta.") || c.ShoulderTap
}

// maxShapes bounds the call shapes whose endpoint the Analyzer remembers.
const maxShapes = 4096

// endpoint returns the API map's endpoint of a call, or -1: matched once
// per shape of call (its method, host and path with runs of digits as one
// '#', so a XUID or a title ID makes no new shape).
func (a *Analyzer) endpoint(method, host, p string) int16 {
	var buf [320]byte
	b := append(append(append(buf[:0], method...), ' '), host...)
	for i := 0; i < len(p) && len(b) < len(buf); i++ {
		switch c := p[i]; {
		case c >= '0' && c <= '9':
			if b[len(b)-1] != '#' {
				b = append(b, '#')
			}
		default:
			b = append(b, c)
		}
	}
	if id, ok := a.shapes[string(b)]; ok {
		return id
	}
	id := int16(loadAPIMap().endpointOf(method, host, p))
	if len(a.shapes) < maxShapes {
		a.shapes[string(b)] = id
	}
	return id
}

// group returns user u's group of scope (ruleScope's or hostScope's).
func (a *Analyzer) group(u int32, scope, host string, rule *limits.Rule) *group {
	k := groupKey{u, scope}
	g := a.groups[k]
	if g == nil {
		g = &group{user: u, scope: scope, host: a.keptHost(host), rule: rule}
		a.groups[k] = g
		a.order = append(a.order, g)
	}
	return g
}

// keepURL remembers a call's method, host and decoded path p (never its
// query) for the findings that quote it, within maxURLBytes.
func (a *Analyzer) keepURL(key uint64, method, host, p string) {
	if _, ok := a.urls[key]; ok || a.urlBytes > maxURLBytes {
		return
	}
	s := safetext.Cut(method, 16) + " " + safetext.Cut(host, maxKeptText) + safetext.Cut(withoutPathParams(shownPath(p)), 203)
	a.urls[key] = s
	a.urlBytes += len(s) + 16
}

// shownPath returns the decoded path p cut before a '?' or '#' it holds (a
// %3F or %23 as the URL wrote it), ending in "..." as safetext marks text
// cut: what follows is as secret as a query, which the findings never
// quote.
func shownPath(p string) string {
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		return p[:i] + "..."
	}
	return p
}

// withoutPathParams returns p with each segment's parameters (";name=value"
// up to the next '/', as servlet containers write a session token:
// ";jsessionid=...") replaced by xblauth.Redacted: the findings quote a
// call's path, never its query, and a path parameter is as secret as a
// query's.
func withoutPathParams(p string) string {
	if !strings.Contains(p, ";") {
		return p
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(p, ';')
		if i < 0 {
			b.WriteString(p)
			return b.String()
		}
		b.WriteString(p[:i+1])
		b.WriteString(xblauth.Redacted)
		p = p[i+1:]
		if j := strings.IndexByte(p, '/'); j >= 0 {
			p = p[j:]
		} else {
			p = ""
		}
	}
}

// callKey hashes what makes two calls the same: method, URL and body.
func callKey(seed maphash.Seed, c *Call) uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	h.WriteString(c.Method)
	h.WriteByte(' ')
	h.WriteString(c.URL)
	h.WriteByte(0)
	h.Write(c.RequestBody)
	return h.Sum64()
}

// splitURL returns a URL's scheme, host (lower case, without port) and
// path (percent-decoded, then without its "." and ".." segments), without
// allocating for the common lower-case host and plain path.
func splitURL(u string) (scheme, host, path string) {
	if i := strings.Index(u, "://"); i >= 0 {
		scheme, u = strings.ToLower(u[:i]), u[i+3:]
	}
	end := strings.IndexAny(u, "/?#")
	if end < 0 {
		end = len(u)
	}
	host, u = u[:end], u[end:]
	if at := strings.LastIndexByte(host, '@'); at >= 0 {
		host = host[at+1:]
	}
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.Contains(host[i:], "]") {
		host = host[:i]
	}
	if strings.ContainsFunc(host, func(r rune) bool { return 'A' <= r && r <= 'Z' }) {
		host = strings.ToLower(host)
	}
	if q := strings.IndexAny(u, "?#"); q >= 0 {
		u = u[:q]
	}
	if u == "" {
		u = "/"
	}
	// As a service routes it, and as the transport and the mock match
	// limits (net/url's Path): percent-encoding decoded; a path that does
	// not decode is kept as written.
	if strings.IndexByte(u, '%') >= 0 {
		if d, err := url.PathUnescape(u); err == nil {
			u = d
		}
	}
	// Then without its "." and ".." segments, as Limits.Match matches it
	// and a service routes it (a %2e is a '.': after decoding), so
	// .../titles/./current is the endpoint .../titles/current.
	return scheme, host, limits.RemoveDotSegments(u)
}

// batchUsers counts the users a batch call's body lists in field; -1 when
// the body does not say (the call is then not judged by size).
func batchUsers(body []byte, field string) int16 {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return -1
	}
	var list []json.RawMessage
	if json.Unmarshal(m[field], &list) != nil || m[field] == nil {
		return -1
	}
	return int16(min(len(list), 32767))
}
