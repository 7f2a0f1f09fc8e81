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
// comes out clean; a call's body is not replayed (the service counts calls, not
// bodies), and the simulated service answers every call it admits. Calls
// the analyzer does not judge (hosts outside the limits and rules, calls
// without a token) are not replayed. The replay is deterministic.
package whatif

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/xblgo/fgrl/analyze"
	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/replay"
)

// MaxURLBytes bounds the distinct URLs a Replayer keeps, in bytes; past
// it, a call's URL is kept without its query (the service counts by path).
const MaxURLBytes = 256 << 20

// Replayer gathers a trace's calls (Add, as analyze.Analyzer does) and
// replays them (Run). It is not safe for concurrent use.
type Replayer struct {
	lim    *limits.Limits
	rules  *analyze.Rules
	before *analyze.Analyzer
	events replay.Pattern // the calls to replay, At from base (Run makes the first 0)
	base   time.Time
	users  map[string]string // userhash -> a XUID of its own in the replay
	reqs   map[string]*replay.Request
	bytes  int
	trace  map[string]*Service // by service scope
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
	return &Replayer{lim: lim, rules: rules, before: before, users: map[string]string{}, reqs: map[string]*replay.Request{},
		trace: map[string]*Service{}}, nil
}

// AddInput records what a reader made of a trace (analyze.Analyzer.AddInput).
// A trace not read whole makes both verdicts Incomplete: the replay is of
// the calls read.
func (r *Replayer) AddInput(in analyze.Input) { r.before.AddInput(in) }

// Add takes one call of the trace. It keeps no reference to c.
func (r *Replayer) Add(c *analyze.Call) {
	r.before.Add(c)
	if len(r.events) >= analyze.MaxCalls {
		return
	}
	scope, uhs, ok := r.before.Judged(c)
	if !ok {
		return // not judged: not replayed
	}
	u, ok := r.users[uhs]
	if !ok {
		u = xuid(len(r.users))
		r.users[uhs] = u
	}
	s := r.service(scope)
	s.Calls++
	if c.Status == 429 {
		s.Trace429s++
	}
	if len(r.events) == 0 {
		r.base = c.Time
	}
	r.events = append(r.events, replay.Event{At: c.Time.Sub(r.base), Service: s.Service, User: u, Count: 1, Req: r.request(c.Method, c.URL)})
}

func (r *Replayer) service(scope string) *Service {
	s := r.trace[scope]
	if s == nil {
		s = &Service{Service: scope}
		r.trace[scope] = s
	}
	return s
}

// request interns a call's method and URL, within MaxURLBytes.
func (r *Replayer) request(method, raw string) *replay.Request {
	k := method + " " + raw
	if q, ok := r.reqs[k]; ok {
		return q
	}
	if r.bytes+len(k) > MaxURLBytes {
		if i := strings.IndexAny(raw, "?#"); i >= 0 {
			raw = raw[:i]
		}
		return &replay.Request{Method: method, URL: raw}
	}
	q := &replay.Request{Method: method, URL: raw}
	r.reqs[k] = q
	r.bytes += 2*len(k) + 64
	return q
}

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
// saw with fgrl, and the calls per service.
type Result struct {
	Before   *analyze.Report `json:"before"`
	After    *analyze.Report `json:"after"`
	Calls    int             `json:"calls"`    // calls replayed
	Services []Service       `json:"services"` // by service scope
}

// Run replays the calls added so far through the fgrl transport and
// returns the what-if. It fails when the trace held no call to replay.
func (r *Replayer) Run(ctx context.Context) (*Result, error) {
	before := r.before.Report()
	if len(r.events) == 0 {
		return nil, errors.New("whatif: the traces hold no call of a judged service with a token")
	}
	p := r.events
	slices.SortStableFunc(p, func(a, b replay.Event) int { return cmp.Compare(a.At, b.At) })
	if p[len(p)-1].At/2-p[0].At/2 > replay.MaxSpan/2 { // halves: no overflow
		return nil, fmt.Errorf("whatif: the traces' calls span more than %v, the longest replay", replay.MaxSpan)
	}
	if start := p[0].At; start != 0 { // a call earlier than the first added
		for i := range p {
			p[i].At -= start
		}
		r.base = r.base.Add(start)
	}
	after, err := analyze.New(r.lim, r.rules)
	if err != nil {
		return nil, err
	}
	for _, in := range before.Inputs { // the traces, as read (and judged: past MaxCalls)
		after.AddInput(in)
	}
	o := &inOrder{a: after}
	tap := func(next http.RoundTripper, now func() time.Time) http.RoundTripper {
		return &analyze.Recorder{Base: next, Now: now, Add: o.add}
	}
	res, err := replay.Run(ctx, p, replay.Options{Limits: r.lim, Client: "fgrl", AnswerAll: true, Base: tap, LimitShare: r.rules.NearLimit})
	if err != nil {
		return nil, err
	}
	o.flush()
	out := &Result{Before: before, After: after.Report(), Calls: len(r.events)}
	for _, s := range res.Services {
		t := r.service(s.Service)
		t.Fgrl429s, t.Delayed, t.Refused = s.Server429s, s.Delayed, s.Delay.Refused
		t.P50Ms, t.P99Ms, t.MaxMs = s.Delay.P50Ms, s.Delay.P99Ms, s.Delay.MaxMs
	}
	for _, s := range r.trace {
		out.Services = append(out.Services, *s)
	}
	sort.Slice(out.Services, func(i, j int) bool { return out.Services[i].Service < out.Services[j].Service })
	return out, nil
}

// xuid is the replay's XUID for the i-th user of the trace.
func xuid(i int) string { return strconv.Itoa(2533274800000000 + i) }
