// Package whatif replays a trace's calls through the fgrl transport, in
// virtual time, against the mock applying the same limits, and reports
// what the transport would have changed: the service's 429s in the trace
// beside those with fgrl, the calls it would have delayed or refused
// locally and how long it would have held them, per service, and the trace
// analyzer's verdict before and after.
//
// It sits above package analyze, which judges traffic by the limits and
// the rules alone and never imports the transport or the mock; this
// package, with package replay, is where the two meet. xblcall analyze --what-if is it on the
// command line.
//
//	r, _ := whatif.New(nil, nil)           // the 2020 limits, the trace analyzer's rules
//	in, err := analyze.ReadHAR(f, r.Add)
//	r.AddInput(in)
//	res, err := r.Run(ctx)                 // res.Before.Verdict, res.After.Verdict, res.Services
//
// Each user of the trace calls at the recorded times (relative to its first
// call), through a transport that keeps every window within the share of
// its limits the analyzer warns past (Rules.NearLimit, 90 %:
// transport.Transport.LimitShare), so what the title could fix by pacing
// comes out clean; a call's User-Agent and body are replayed for the
// analysis after alone (the service counts calls, not bodies), and the
// simulated service answers every call it admits. A call the replay cannot
// send fails the what-if. Calls the analyzer does not judge (hosts outside the limits and rules, calls
// without a token) are not replayed: After takes them as the trace has
// them, as fgrl changes nothing of them. The replay is deterministic.
package whatif

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/xblgo/fgrl/analyze"
	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/replay"
)

// MaxURLBytes bounds the distinct URLs (with their User-Agents and request
// bodies) a Replayer keeps, in bytes; past it, a call's URL is kept without
// its query and its body (the service counts by path), and the verdict
// after is Incomplete, as the analysis after no longer reads those calls
// as the trace's.
const MaxURLBytes = 256 << 20

// maxURLBytes is MaxURLBytes, which a test lowers.
var maxURLBytes = MaxURLBytes

// MemoryLimit is the soft memory limit (runtime/debug.SetMemoryLimit) a
// what-if runs under in xblcall analyze --what-if (LimitMemory). Most of a
// replay's heap is garbage between two collections; with the collector's
// default pacing alone, a replay of 2 M calls, holding about 90 MiB live,
// grows to about 250 MiB resident; under the limit the collector runs
// sooner instead (BENCHMARKS.md, §7b). The limit is soft, and never under
// twice the heap live after the last collection: a larger trace, which
// must hold more, runs as the default pacing would run it rather than
// have the collector run back to back.
const MemoryLimit = 180 << 20

// LimitMemory sets the process's soft memory limit to MemoryLimit unless
// GOMEMLIMIT set one, and returns what restores the limit before it. It is
// safe for concurrent use: what-ifs that overlap share the limit, and the
// last of them to end restores the limit before the first.
func LimitMemory() (restore func()) {
	limiting.Lock()
	defer limiting.Unlock()
	if limiting.n == 0 {
		if os.Getenv("GOMEMLIMIT") != "" || debug.SetMemoryLimit(-1) != math.MaxInt64 {
			return func() {}
		}
		limiting.before = debug.SetMemoryLimit(MemoryLimit)
		limiting.gen++
		followLiveHeap(limiting.gen)
	}
	limiting.n++
	var once sync.Once
	return func() {
		once.Do(func() {
			limiting.Lock()
			defer limiting.Unlock()
			if limiting.n--; limiting.n == 0 {
				debug.SetMemoryLimit(limiting.before)
			}
		})
	}
}

// limiting counts the what-ifs under LimitMemory's limit.
var limiting struct {
	sync.Mutex
	n      int   // what-ifs under the limit
	before int64 // the limit before the first
	gen    int   // the times the limit was set
}

// followLiveHeap keeps the limit at twice the live heap at least, after
// every collection, while the limit set as gen lasts: a trace that holds
// more than half of MemoryLimit live would otherwise have the collector
// run back to back (up to half the CPU, the runtime's cap), where the
// default pacing alone would let the heap grow to twice the live heap.
func followLiveHeap(gen int) {
	type sentinel struct{ _ [16]byte } // 16 bytes: never in a tiny block another object keeps alive
	runtime.SetFinalizer(new(sentinel), func(*sentinel) {
		limiting.Lock()
		defer limiting.Unlock()
		if limiting.n == 0 || limiting.gen != gen {
			return
		}
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(s)
		debug.SetMemoryLimit(max(MemoryLimit, 2*int64(s[0].Value.Uint64())))
		followLiveHeap(gen)
	})
}

// Replayer gathers a trace's calls (Add, as analyze.Analyzer does) and
// replays them (Run), once. It keeps 16 bytes a call for the replay beside
// the trace's analysis. It is not safe for concurrent use.
type Replayer struct {
	lim    *limits.Limits
	rules  *analyze.Rules
	before *analyze.Analyzer // nil once Run has begun
	// after is the analysis with fgrl: the calls not replayed (not judged,
	// without a token) are added to it as the trace has them, as fgrl
	// changes nothing of them, so their findings stay in the verdict after.
	after *analyze.Analyzer
	calls events // the calls to replay, at from base (Run makes the first 0)
	base  time.Time
	users map[string]int32 // userhash -> index in xuids
	xuids []string         // a XUID of its own in the replay for each user of the trace
	reqs  map[string]int32 // service, method, URL, User-Agent and body (kind) -> index in kinds
	kinds []kind
	bytes int
	// dropped counts the calls whose query or body was left out past
	// MaxURLBytes, the first of them dropAt (its Call.Index): the analysis
	// after is then Incomplete.
	dropped, dropAt int
	parts           int                 // replay.Options.Parts: GOMAXPROCS
	trace           map[string]*Service // by service scope
	// user429s counts the trace's 429s per service and user, explained
	// the calls of each the replay held, refused or met a 429 on: one
	// user's held calls explain no other user's 429s.
	user429s, explained map[userScope]int
}

// userScope is one user's calls of one service in the replay.
type userScope struct{ service, user string }

// call is one call of the trace as the replay needs it.
type call struct {
	at   time.Duration
	user int32 // in Replayer.xuids
	kind int32 // in Replayer.kinds
}

// kind is a distinct request of the trace and the service it calls.
type kind struct {
	service string
	req     *replay.Request
}

// New returns a Replayer judging and replaying under lim (nil: the 2020
// table) and rules (nil: the trace analyzer's).
func New(lim *limits.Limits, rules *analyze.Rules) (*Replayer, error) {
	if lim == nil {
		lim = limits.Default()
	}
	if rules == nil {
		rules = analyze.DefaultRules()
	}
	before, err := analyze.New(lim, rules)
	if err != nil {
		return nil, err
	}
	after, err := analyze.New(lim, rules)
	if err != nil {
		return nil, err
	}
	return &Replayer{lim: lim, rules: rules, before: before, after: after, users: map[string]int32{}, reqs: map[string]int32{},
		trace: map[string]*Service{}, parts: runtime.GOMAXPROCS(0), user429s: map[userScope]int{}, explained: map[userScope]int{}}, nil
}

// AddInput records what a reader made of a trace (analyze.Analyzer.AddInput).
// A trace not read whole makes both verdicts Incomplete: the replay is of
// the calls read. It is ignored once Run has begun.
func (r *Replayer) AddInput(in analyze.Input) {
	if r.before != nil {
		r.before.AddInput(in)
	}
}

// Add takes one call of the trace. It keeps no reference to c, and ignores
// calls once Run has begun.
func (r *Replayer) Add(c *analyze.Call) {
	if r.before == nil {
		return
	}
	r.before.Add(c)
	if r.calls.n >= analyze.MaxCalls {
		return
	}
	scope, uhs, ok := r.before.Judged(c)
	if !ok {
		r.after.Add(c) // not judged: not replayed, and as the trace's after
		return
	}
	u, ok := r.users[uhs]
	if !ok {
		u = int32(len(r.xuids))
		r.xuids = append(r.xuids, xuid(len(r.xuids)))
		r.users[uhs] = u
	}
	s := r.service(scope)
	s.Calls++
	if c.Status == 429 {
		s.Trace429s++
		r.user429s[userScope{s.Service, r.xuids[u]}]++
	}
	if r.calls.n == 0 {
		r.base = c.Time
	}
	r.calls.add(call{at: c.Time.Sub(r.base), user: u, kind: r.kind(s.Service, c)})
}

func (r *Replayer) service(scope string) *Service {
	s := r.trace[scope]
	if s == nil {
		s = &Service{Service: scope}
		r.trace[scope] = s
	}
	return s
}

// kind interns a call's service, method, URL, User-Agent and request body,
// within MaxURLBytes. The User-Agent and body are replayed for the analysis
// after, whose rules read them (a title's own calls, Social Manager's, a
// batch's users, a repeated call), as the trace's did.
func (r *Replayer) kind(service string, c *analyze.Call) int32 {
	// Each part but the body after its length: a NUL or a space in a
	// User-Agent or a body (a HAR's "\u0000") makes no other call's key.
	k := lenPrefixed(service) + lenPrefixed(c.Method) + lenPrefixed(c.URL) + lenPrefixed(c.UserAgent) + string(c.RequestBody)
	if i, ok := r.reqs[k]; ok {
		return i
	}
	i := int32(len(r.kinds))
	if r.bytes+len(k) > maxURLBytes {
		raw := c.URL
		if j := strings.IndexAny(raw, "?#"); j >= 0 {
			raw = raw[:j]
		}
		if len(c.RequestBody) > 0 || len(raw) < len(c.URL) {
			if r.dropped == 0 {
				r.dropAt = c.Index
			}
			r.dropped++
		}
		// Calls alike once cut are one request: the calls of a path with
		// queries of their own (a cache-buster) each kept a URL, a kind
		// and a request of their own, 11 times what a call under the
		// bound costs. A key starting with '-' is no key under the bound.
		cut := "-" + lenPrefixed(service) + lenPrefixed(c.Method) + lenPrefixed(raw) + c.UserAgent
		if j, ok := r.reqs[cut]; ok {
			return j
		}
		r.reqs[cut] = i
		r.kinds = append(r.kinds, kind{service, &replay.Request{Method: c.Method, URL: overHTTPS(raw), UserAgent: strings.Clone(c.UserAgent)}})
		return i
	}
	body := len(k) - len(c.RequestBody) // parts of the key: never of the trace's text
	ua := k[body-len(c.UserAgent) : body]
	req := &replay.Request{Method: c.Method, URL: overHTTPS(c.URL), UserAgent: ua, Body: k[body:]}
	r.kinds = append(r.kinds, kind{service, req})
	r.reqs[k] = i
	r.bytes += 2*len(k) + len(req.URL) + kindBytes // the key (and the map's growth), the URL's copy
	return i
}

// lenPrefixed is s after its length, a part of a key no other can end.
func lenPrefixed(s string) string { return strconv.Itoa(len(s)) + ":" + s }

// kindBytes is what a distinct request costs beside its key and URL: its
// map entry, its kind (and the slice's growth) and its replay.Request.
const kindBytes = 160

// overHTTPS returns a call's URL as the replay sends it: over https,
// whatever scheme (or none) the trace recorded, as the analyzer judges a
// call by its host and path alone and the transport sends no token over
// http. The result is never a part of raw.
func overHTTPS(raw string) string {
	if i := strings.Index(raw, "://"); i >= 0 { // as the analyzer splits it
		raw = raw[i+3:]
	}
	return "https://" + raw
}

// events are the calls as the replay reads them (replay.Releaser): in
// chunks of eventChunk, each let go once every part of the replay has
// read it, so a what-if does not hold its trace's calls beside the calls
// its replay made. Calls added in time order, as a trace's mostly are,
// are replayed from the chunks they were added to.
type events struct {
	r      *Replayer
	n      int
	chunks [][]call // chunk i holds calls i*eventChunk on; nil once released
}

// eventChunk is how many calls a chunk of events holds (256 KiB).
const eventChunk = 1 << 14

// add appends c.
func (e *events) add(c call) {
	if e.n%eventChunk == 0 {
		e.chunks = append(e.chunks, make([]call, 0, eventChunk))
	}
	last := &e.chunks[len(e.chunks)-1]
	*last = append(*last, c)
	e.n++
}

// call returns call i.
func (e *events) call(i int) call { return e.chunks[i/eventChunk][i%eventChunk] }

// inOrder reports whether the calls are in time order.
func (e *events) inOrder() bool {
	for i := 1; i < e.n; i++ {
		if e.call(i).at < e.call(i-1).at {
			return false
		}
	}
	return true
}

// sort puts the calls in time order (stably), through one slice of them
// all: only calls added out of order need it.
func (e *events) sort() {
	all := make([]call, 0, e.n)
	for _, c := range e.chunks {
		all = append(all, c...)
	}
	e.chunks = nil
	slices.SortStableFunc(all, func(a, b call) int { return cmp.Compare(a.at, b.at) })
	for len(all) > 0 { // chunks of their own, which Release frees one by one
		n := min(len(all), eventChunk)
		e.chunks = append(e.chunks, slices.Clone(all[:n]))
		all = all[n:]
	}
}

func (e *events) Len() int { return e.n }

func (e *events) Event(i int) replay.Event {
	c, r := e.call(i), e.r
	k := r.kinds[c.kind]
	return replay.Event{At: c.at, Service: k.service, User: r.xuids[c.user], Count: 1, Req: k.req}
}

// Release lets go of the chunks wholly before the n-th call.
func (e *events) Release(n int) { clear(e.chunks[:n/eventChunk]) }

// Service is what became of one service's calls.
type Service struct {
	Service   string `json:"service"`
	Calls     int    `json:"calls"`     // in the trace
	Trace429s int    `json:"trace429s"` // 429 answers in the trace
	// With fgrl: the service's 429s (retries included), the calls the
	// transport held before sending, the calls it refused without
	// sending, and how long it held the calls (milliseconds).
	Fgrl429s int     `json:"fgrl429s"`
	Delayed  int     `json:"delayed"`
	Refused  int     `json:"refusedLocally"`
	P50Ms    float64 `json:"delayP50Ms"`
	P99Ms    float64 `json:"delayP99Ms"`
	MaxMs    float64 `json:"delayMaxMs"`
}

// Result is the what-if: the reports of the trace and of what the service
// saw with fgrl, what became of the calls, and the calls per service.
type Result struct {
	Before *analyze.Report `json:"before"`
	After  *analyze.Report `json:"after"`
	Calls  int             `json:"calls"` // calls replayed
	// Served, Delayed and Refused are the calls the service answered
	// (without a 429), the calls the transport held before sending, and
	// those it refused without sending: the service never saw these, so
	// After judges the calls without them (RefusedOnly).
	Served   int       `json:"served"`
	Delayed  int       `json:"delayed"`
	Refused  int       `json:"refusedLocally"`
	Services []Service `json:"services"` // by service scope
	// Unreproduced names the services whose 429s in the trace the replay
	// does not explain: with fgrl under the same limits fewer of their calls
	// waited, were refused or met a 429 than the trace's 429s, so the
	// service throttled the trace (some of it) below those limits (other
	// limits than the table's, or calls the trace did not hold). What After
	// says of them assumes the table's limits. Counted per user: one
	// user's held calls explain no other user's 429s.
	Unreproduced []string `json:"unreproduced429s,omitempty"`
}

// RefusedOnly reports whether the verdict with fgrl is better than the
// trace's while the transport refused calls locally: the title then sees
// those calls fail (a *transport.ThrottleError), and After judges only the
// calls it let through; pacing alone did not make it so.
func (r *Result) RefusedOnly() bool {
	return r.Refused > 0 && rank(r.After.Verdict) < rank(r.Before.Verdict)
}

// rank orders verdicts from green to red.
func rank(v string) int {
	switch v {
	case analyze.Green:
		return 0
	case analyze.Yellow:
		return 1
	}
	return 2
}

// Run replays the calls added so far through the fgrl transport and
// returns the what-if. It fails when the trace held no call to replay. A
// Replayer runs once: Run lets the trace's analysis go (its report is in
// the result) before the replay's own grows, and the calls after, and a
// second Run fails.
func (r *Replayer) Run(ctx context.Context) (*Result, error) {
	if r.before == nil {
		return nil, errors.New("whatif: a Replayer runs once")
	}
	before := r.before.Report()
	r.before = nil
	defer func() { r.calls, r.kinds, r.reqs, r.user429s, r.explained = events{}, nil, nil, nil, nil }()
	if r.calls.n == 0 {
		return nil, errors.New("whatif: the traces hold no call of a judged service with a token")
	}
	ev := &r.calls
	ev.r = r
	if !ev.inOrder() {
		ev.sort()
	}
	first, last := ev.call(0).at, ev.call(ev.n-1).at
	if last/2-first/2 > replay.MaxSpan/2 { // halves: no overflow
		return nil, fmt.Errorf("whatif: the traces' calls span more than %v, the longest replay", replay.MaxSpan)
	}
	if first != 0 { // a call earlier than the first added
		for _, c := range ev.chunks {
			for i := range c {
				c[i].at -= first
			}
		}
		r.base = r.base.Add(first)
	}
	after := r.after
	r.after = nil
	for _, in := range before.Inputs { // the traces, as read (and judged: past MaxCalls)
		after.AddInput(in)
	}
	if r.dropped > 0 { // the analysis after does not read those calls as the trace's: never a pass
		after.AddInput(analyze.Input{Name: "what-if replay", ProblemCount: r.dropped, Problems: []analyze.Problem{{Index: r.dropAt, Offset: -1,
			Reason: fmt.Sprintf("%d calls replayed without their query or request body, past %d MiB of distinct requests", r.dropped, maxURLBytes>>20)}}})
	}
	o := &inOrder{a: after}
	tap := func(next http.RoundTripper, now func() time.Time) http.RoundTripper {
		return &analyze.Recorder{Base: next, Now: now, Add: o.add}
	}
	res, err := replay.RunEvents(ctx, ev, replay.Options{Limits: r.lim, Client: "fgrl", AnswerAll: true, Base: tap,
		LimitShare: r.rules.NearLimit, NoKeys: true, Parts: r.parts, OnStep: o.before, Step: step(last-first, ev.n),
		OnCall: func(e *replay.Event, held bool) {
			if k := (userScope{e.Service, e.User}); held && r.user429s[k] > 0 {
				r.explained[k]++
			}
		}})
	ev.chunks = nil // every one read
	if err != nil {
		return nil, err
	}
	if res.Failed > 0 { // never a pass: After would judge the trace without them
		return nil, fmt.Errorf("whatif: %d of the traces' %d calls could not be replayed (a method or URL the replay cannot send)", res.Failed, ev.n)
	}
	o.flush()
	out := &Result{Before: before, After: after.Report(), Calls: ev.n, Served: res.Served, Refused: res.Refused}
	for _, s := range res.Services {
		out.Delayed += s.Delayed
		t := r.service(s.Service)
		t.Fgrl429s, t.Delayed, t.Refused = s.Server429s, s.Delayed, s.Delay.Refused
		t.P50Ms, t.P99Ms, t.MaxMs = s.Delay.P50Ms, s.Delay.P99Ms, s.Delay.MaxMs
	}
	for _, s := range r.trace {
		out.Services = append(out.Services, *s)
	}
	sort.Slice(out.Services, func(i, j int) bool { return out.Services[i].Service < out.Services[j].Service })
	// Each call of a user that fgrl held, refused or met a 429 on explains
	// one of that user's 429s at most. (A service's own count needs no
	// check of its own: its 429s are its users', and its held calls at
	// least theirs.)
	for k, n := range r.user429s {
		if n > r.explained[k] {
			out.Unreproduced = append(out.Unreproduced, k.service)
		}
	}
	slices.Sort(out.Unreproduced)
	out.Unreproduced = slices.Compact(out.Unreproduced)
	return out, nil
}

// stepCalls is about how many calls the replay makes between two points
// where its parts meet (replay.Options.Step): few enough for the calls held
// until then, many enough that waiting for the slowest part is rare.
const stepCalls = 10_000

// step is the virtual time in which a replay of n calls over span makes
// about stepCalls calls, from a millisecond to a minute.
func step(span time.Duration, n int) time.Duration {
	return min(max(time.Duration(float64(span)*stepCalls/float64(n)), time.Millisecond), time.Minute)
}

// xuid is the replay's XUID for the i-th user of the trace.
func xuid(i int) string { return strconv.Itoa(2533274800000000 + i) }
