package replay

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xblgo/fgrl/internal/clock"
	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/transport"
)

// Clients lists the clients a simulation can drive.
var Clients = []string{"naive", "xsapi", "fgrl"}

// Subscribed is the client that subscribes (Real-Time Activity) where the
// service pushes a scope's changes (limits.SubscriptionFor: presence,
// social, MPSD sessions) and polls the rest through the fgrl transport: a
// user's first read of such a scope is made, to start from its state;
// every later read is replaced by the events of one subscription, which
// the service does not count as calls.
const Subscribed = "subscribed"

// Options configures a run.
type Options struct {
	// Limits are the service's limits; the pattern's services are scopes of
	// it. Required.
	Limits *limits.Limits
	// Client is "naive" (a plain client: one attempt, 429s and all),
	// "xsapi" (XSAPI's retries and Retry-After cache, no budget) or "fgrl"
	// (the transport with its budget).
	Client string
	// TitleID is the title calls are made for; empty means "1234567890".
	TitleID string
	// ServiceLimits are the limits the simulated service applies, when they
	// differ from the clients' Limits (drift: the fgrl client learns them
	// from the 429 bodies). Nil means Limits. The pattern's services are
	// scopes of these.
	ServiceLimits *limits.Limits
	// LimitShare is the fgrl client's transport.Transport.LimitShare.
	LimitShare float64
	// AnswerAll makes the simulated service answer every call it counts
	// 200 with an empty object, whatever its route: a replayed trace calls
	// endpoints the mock may not serve, and only the counts matter.
	AnswerAll bool
	// Coalesce makes the fgrl client coalesce identical reads of a user
	// (transport.Transport.CoalesceReads) and keep their answers for a
	// second (ReadCacheTTL).
	Coalesce bool
	// Progress, if set, is called as the virtual time advances.
	Progress func(done, total time.Duration)
	// Base, if set, wraps the mock: it receives each request the service
	// sees (for recording a trace) and must pass it to next.
	Base func(next http.RoundTripper, now func() time.Time) http.RoundTripper
	// Parts, when above 1, replays the events in that many parts at once
	// (on as many cores), each user's calls in one part, on a clock, a
	// service and a client of its own: for calls whose users are
	// independent, as they are when the service applies the clients'
	// limits (ServiceLimits nil), since every count is per key. The result
	// is the same as in one part. Progress is not called then.
	Parts int
	// OnStep, if set, is called at every Step of virtual time (a second
	// if zero), with every part paused, once the service has seen every
	// call made before until: a Base that records calls can take those
	// in one order whatever the parts.
	OnStep func(until time.Time)
	Step   time.Duration
	// OnCall, if set, is called once a call of an event has ended, with
	// whether the client held it (it took longer than the answer), refused
	// it or it ended in a 429: under the run's lock, so it need not be
	// safe for concurrent use.
	OnCall func(e *Event, held bool)
	// NoKeys leaves Result.Keys and Rows out: the service's counts are
	// kept per scope only, so a long replay (package whatif) holds no
	// tally per key and 15 s interval.
	NoKeys bool

	onRunner func(*runner) // tests: see the runner
}

// Row is what the service saw of one key in one 15 s interval (or, with zero
// requests, a run of idle intervals): its requests, its burst and sustain
// counts after the interval's last request, and the 429s it answered.
type Row struct {
	Start        int    `json:"start"` // seconds from the pattern's time 0 (its events' At), as End
	End          int    `json:"end"`
	Requests     int    `json:"requests"`
	BurstCount   int    `json:"burstCount"`
	SustainCount int    `json:"sustainCount"`
	Throttled    int    `json:"throttled"`
	Limit        string `json:"limit"` // "burst", "sustain", "both" or "-"
}

// Result is the outcome of a run.
type Result struct {
	Client string `json:"client"`
	// Keys are the tables of every key (user + service scope) the pattern
	// called, the busiest first.
	Keys []KeyResult `json:"keys"`
	// Rows are the busiest key's table (Keys[0].Rows).
	Rows       []Row `json:"rows"`
	Calls      int   `json:"calls"`          // calls the pattern made (a run cut short: those it made)
	Served     int   `json:"served"`         // calls that ended in a non-429 answer
	Server429s int   `json:"server429s"`     // 429 answers the service sent, retries included
	Refused    int   `json:"refusedLocally"` // calls the transport refused without an answer
	Failed     int   `json:"failed"`         // calls that ended in another error
	Sent       int   `json:"sent"`           // requests that reached the service, retries included
	// Subscriptions are the RTA subscriptions the Subscribed client made,
	// one a user and scope; Pushed the calls they made needless (counted
	// in Served: the changes they polled for arrive as events).
	Subscriptions int `json:"subscriptions,omitempty"`
	Pushed        int `json:"pushed,omitempty"`
	// Interactive and Background are the pattern's calls of each priority:
	// how many the client refused, and how long they took, from when the
	// pattern makes them to their end: the delay the client added (the
	// simulated service answers at once).
	Interactive Delay `json:"interactive"`
	Background  Delay `json:"background"`
	// Services are the calls per service (the events' Service), with the
	// 429s the service answered them.
	Services []ServiceResult `json:"services"`
	// BurstLimit and SustainLimit are the limits of the service the pattern
	// calls most.
	BurstLimit   int `json:"burstLimit"`
	SustainLimit int `json:"sustainLimit"`
}

// Delay summarises how long calls took, in virtual milliseconds.
type Delay struct {
	Calls   int             `json:"calls"`
	Refused int             `json:"refusedLocally"`
	P50Ms   float64         `json:"p50Ms"`
	P99Ms   float64         `json:"p99Ms"`
	MaxMs   float64         `json:"maxMs"`
	zeros   int             // calls that took no time: most, kept as a count
	took    []time.Duration // the others
}

func (d *Delay) add(took time.Duration, o outcome) {
	d.Calls++
	if o == refused {
		d.Refused++
	}
	if took == 0 {
		d.zeros++
		return
	}
	d.took = append(d.took, took)
}

// serviceTally is a service's result while a run makes its calls, with
// its calls' delays by priority (priority).
type serviceTally struct {
	ServiceResult
	delays [2]Delay
}

// priority is the index of e's priority in a [2]Delay: 0 interactive, 1
// background.
func priority(e *Event) int {
	if e.Background {
		return 1
	}
	return 0
}

// summarize returns the calls of parts as one Delay, its percentiles
// (nearest rank) over all their samples, without joining them: each
// part's are sorted in place and each percentile found across the parts
// (nth). A part may be summed into several Delays; none keeps its samples.
func summarize(parts ...*Delay) Delay {
	var d Delay
	n := 0
	for _, p := range parts {
		d.Calls += p.Calls
		d.Refused += p.Refused
		d.zeros += p.zeros
		n += p.zeros + len(p.took)
		if !slices.IsSorted(p.took) {
			slices.Sort(p.took)
		}
	}
	if n == 0 {
		return d
	}
	at := func(q float64) float64 {
		i := max(0, min(n-1, int(math.Ceil(q*float64(n)))-1))
		if i < d.zeros {
			return 0
		}
		return float64(nth(parts, i-d.zeros)) / float64(time.Millisecond)
	}
	d.P50Ms, d.P99Ms, d.MaxMs = at(0.50), at(0.99), at(1)
	return d
}

// nth returns the r-th least (from 0) of the samples of parts, each
// sorted: the least value with r+1 samples at or under it, found by
// halving the span of the values, which takes at most 64 counts of
// O(len(parts) × log samples) each, however many parts a priority's
// samples are spread over (a service each).
func nth(parts []*Delay, r int) time.Duration {
	lo, hi := time.Duration(math.MaxInt64), time.Duration(0)
	for _, p := range parts {
		if len(p.took) > 0 {
			lo, hi = min(lo, p.took[0]), max(hi, p.took[len(p.took)-1])
		}
	}
	for lo < hi {
		mid := lo + (hi-lo)/2
		c := 0 // samples at or under mid
		for _, p := range parts {
			i, _ := slices.BinarySearch(p.took, mid+1) // mid < hi: no overflow
			c += i
		}
		if c > r {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// ServiceResult is what became of the calls to one service.
type ServiceResult struct {
	Service    string `json:"service"`
	Server429s int    `json:"server429s"` // 429 answers, retries included
	Delayed    int    `json:"delayed"`    // calls that took longer than the service's answer (waited)
	Delay      Delay  `json:"delay"`      // every call: how many, refused, how long they took
}

// KeyResult is what the service saw of one key.
type KeyResult struct {
	User     string `json:"user"`  // the pattern's user (an XUID)
	Scope    string `json:"scope"` // the service scope, such as "profile"
	Burst    int    `json:"burst"` // the scope's limits
	Sustain  int    `json:"sustain"`
	Requests int    `json:"requests"` // requests that reached the service
	Rows     []Row  `json:"rows"`
}

// Events is a replay's calls, read one event at a time as the replay
// reaches it: a Pattern, or a trace too long to hold as one (package whatif
// keeps 16 bytes a call where an Event takes 72).
type Events interface {
	Len() int
	// Event returns the i-th event; their At never decreases with i.
	Event(i int) Event
}

// Releaser is an Events that can let go of the events a run has read for
// the last time: at each step where a run's parts meet (Options.OnStep),
// Release(n) says that no event before the n-th is read again. A trace
// too long to hold twice (package whatif) frees its calls as the replay
// passes them.
type Releaser interface {
	Events
	Release(n int)
}

// Len returns the events in p.
func (p Pattern) Len() int { return len(p) }

// Event returns p[i].
func (p Pattern) Event(i int) Event { return p[i] }

// Run replays p in virtual time; p need not be in time order. When ctx
// ends, the calls not yet started are not made and Run returns ctx's error
// with what the run counted until then.
func Run(ctx context.Context, p Pattern, o Options) (Result, error) {
	if !slices.IsSortedFunc(p, byTime) {
		p = slices.Clone(p)
		slices.SortStableFunc(p, byTime)
	}
	return RunEvents(ctx, p, o)
}

func byTime(a, b Event) int { return cmp.Compare(a.At, b.At) }

// RunEvents replays ev, whose events are in time order, in virtual time;
// a context that ends ends it as it ends Run.
// It holds an event from when its first call starts until its last has
// started, and a call until it ends: memory grows with the calls at once
// and, unless Options.NoKeys, with the keys' tables, not with the events.
func RunEvents(ctx context.Context, ev Events, o Options) (Result, error) {
	sum, err := o.check(ev)
	if err != nil {
		return Result{}, err
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	svc := o.service()
	script := exampleScript
	if o.AnswerAll {
		script = answerAll
	}
	res := Result{Client: o.Client, Calls: sum.calls}
	if r, ok := svc.ByScope(sum.busiest); ok {
		res.BurstLimit, res.SustainLimit = r.Burst, r.Sustain
	}
	tl := &tallies{o: &o, svc: svc, res: &res, services: map[string]*serviceTally{}, subscribed: map[[2]string]bool{}}
	services := tl.services
	n := o.parts()
	var st *steps
	if n > 1 || o.OnStep != nil {
		st = &steps{every: o.step(), start: start, on: o.OnStep, live: n}
		st.cond = sync.NewCond(&st.mu)
	}
	parts := make([]*part, n)
	if rel, ok := ev.(Releaser); ok && st != nil {
		st.release = func() {
			read := ev.Len()
			for _, p := range parts {
				read = min(read, int(p.read.Load()))
			}
			rel.Release(read)
		}
	}
	for i := range parts {
		v := clock.NewVirtual(start)
		h, err := mock.New(mock.Config{Limits: svc, Now: v.Now, Script: script})
		if err != nil {
			return Result{}, err
		}
		obs := &observer{h: h, now: v.Now, start: start, title: o.title(), limits: svc, noKeys: o.NoKeys}
		var base http.RoundTripper = obs
		if o.Base != nil {
			base = o.Base(obs, v.Now)
		}
		rt := o.client(base)
		r := newRunner(ctx, v)
		if o.onRunner != nil {
			o.onRunner(r)
		}
		ctx := clock.With(ctx, r)
		r.call = func(e *Event) {
			if o.Client == Subscribed && tl.pushed(e) {
				return
			}
			start := v.Now()
			outcome := call(ctx, rt, &o, e)
			tl.done(e, outcome, v.Now().Sub(start))
		}
		parts[i] = &part{v: v, obs: obs, r: r, ctx: ctx}
	}
	for i, p := range parts {
		keep := func(e *Event) bool { return n == 1 || partOf(e.User, n) == i }
		progress := o.Progress
		if n > 1 {
			progress = nil
		}
		var read *atomic.Int64 // only where the events are released
		if st != nil && st.release != nil {
			read = &p.read
		}
		p.v.Go(func() {
			feed(p.ctx, p.v, ev, keep, sum.end, progress, p.r.push, read)
			p.fed.Store(true)
		})
		if st != nil {
			p.v.Go(func() { p.tick(st) })
		}
	}
	for _, p := range parts {
		p.v.Wait()
		p.r.close()
	}
	var keys []KeyResult
	for _, p := range parts {
		if !o.NoKeys {
			keys = append(keys, p.obs.results(sum.users)...)
		}
		for scope, t := range p.obs.scopes {
			res.Sent += t.requests
			res.Server429s += t.throttled
			if s := services[scope]; s != nil {
				s.Server429s += t.throttled
			}
		}
	}
	if !o.NoKeys {
		sortKeys(keys)
		res.Keys = keys
		if len(res.Keys) > 0 {
			res.Rows = res.Keys[0].Rows
		}
	}
	of := [2][]*Delay{{&res.Interactive}, {&res.Background}} // the pushed calls' zeros, and every service's delays
	for _, s := range services {
		s.Delay = summarize(&s.delays[0], &s.delays[1])
		of[0], of[1] = append(of[0], &s.delays[0]), append(of[1], &s.delays[1])
		res.Services = append(res.Services, s.ServiceResult)
	}
	res.Interactive, res.Background = summarize(of[0]...), summarize(of[1]...)
	slices.SortFunc(res.Services, func(a, b ServiceResult) int { return strings.Compare(a.Service, b.Service) })
	if ctx.Err() != nil { // cut short: the calls made, not the pattern's
		res.Calls = res.Interactive.Calls + res.Background.Calls
	}
	return res, ctx.Err()
}

// tallies is what a run counts of its calls as they end, under its lock:
// apart from the closure that makes a call, as a call waiting for its
// budget holds its goroutine's stack, and the replay can have thousands
// waiting at once.
type tallies struct {
	o   *Options
	svc *limits.Limits
	res *Result
	mu  sync.Mutex
	// services holds each call's delay once, under its service and
	// priority; the figures of a service and of a priority are summed
	// from them at the end (summarize).
	services   map[string]*serviceTally
	subscribed map[[2]string]bool // a user and scope the Subscribed client subscribed to
}

// pushed reports whether the Subscribed client's subscription answers e's
// call, counting it as served; the first read of a user and scope is made
// (and subscribes).
func (t *tallies) pushed(e *Event) bool {
	if e.Req != nil || limits.SubscriptionFor(e.Service) == "" {
		return false
	}
	if method, _, _ := serviceCall(t.svc, e); method != http.MethodGet {
		return false
	}
	k := [2]string{e.User, e.Service}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.subscribed[k] {
		t.subscribed[k] = true
		t.res.Subscriptions++
		return false
	}
	t.res.Pushed++
	t.res.count(served)
	[2]*Delay{&t.res.Interactive, &t.res.Background}[priority(e)].add(0, served) // a pushed call's zero
	return true
}

// done counts a call of e that ended in outcome after took.
func (t *tallies) done(e *Event, outcome outcome, took time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.res.count(outcome)
	s := t.services[e.Service]
	if s == nil {
		s = &serviceTally{ServiceResult: ServiceResult{Service: e.Service}}
		t.services[e.Service] = s
	}
	s.delays[priority(e)].add(took, outcome)
	if took > 0 {
		s.Delayed++
	}
	if t.o.OnCall != nil {
		t.o.OnCall(e, took > 0 || outcome != served)
	}
}

// parts is how many parts the run replays at once.
func (o *Options) parts() int {
	if o.Parts < 1 || (o.ServiceLimits != nil && o.ServiceLimits != o.Limits) {
		return 1
	}
	return o.Parts
}

func (o *Options) step() time.Duration {
	if o.Step <= 0 {
		return time.Second
	}
	return o.Step
}

func (o *Options) title() string {
	if o.TitleID == "" {
		return "1234567890"
	}
	return o.TitleID
}

// service returns the limits the simulated service applies.
func (o *Options) service() *limits.Limits {
	if o.ServiceLimits != nil {
		return o.ServiceLimits
	}
	return o.Limits
}

// summary is what a run needs to know of its events before it starts.
type summary struct {
	calls   int
	end     time.Duration     // when the last call is made
	busiest string            // the service called most
	users   map[string]string // userhash -> xuid, for the keys' tables (nil with NoKeys)
}

// check reads the events once: that they are in time order and call known
// services, and their summary.
func (o *Options) check(ev Events) (summary, error) {
	if o.Limits == nil {
		return summary{}, errors.New("sim: no limits")
	}
	if !slices.Contains(Clients, o.Client) && o.Client != Subscribed {
		return summary{}, fmt.Errorf("sim: unknown client %s (have %s)", safetext.Quote(o.Client, 40), strings.Join(Clients, ", "))
	}
	svc := o.service()
	sum := summary{}
	if !o.NoKeys {
		sum.users = map[string]string{}
	}
	calls := map[string]int{}
	var last time.Duration
	for i := range ev.Len() {
		e := ev.Event(i)
		if e.At < last {
			return summary{}, fmt.Errorf("sim: event %d at %v comes after one at %v", i, e.At, last)
		}
		last = e.At
		if _, ok := svc.ByScope(e.Service); !ok && e.Req == nil {
			return summary{}, fmt.Errorf("sim: unknown service %s in the pattern (have %s)", safetext.Quote(e.Service, 40), strings.Join(svc.Scopes(), ", "))
		}
		sum.calls += e.Count
		sum.end = max(sum.end, e.At+e.Spread)
		calls[e.Service] += e.Count
		if sum.busiest == "" || calls[e.Service] > calls[sum.busiest] {
			sum.busiest = e.Service
		}
		if sum.users != nil {
			if _, ok := sum.users[e.User]; !ok {
				sum.users[e.User] = ""
			}
		}
	}
	if sum.users != nil { // xuid -> "" while reading, then userhash -> xuid
		users := make(map[string]string, len(sum.users))
		for x := range sum.users {
			users[mock.UserHash(x)] = x
		}
		sum.users = users
	}
	return sum, nil
}

func (o *Options) client(base http.RoundTripper) http.RoundTripper {
	switch o.Client {
	case "xsapi":
		return &transport.Transport{Base: base, Limits: o.Limits, TitleID: o.title(), DisableBudget: true}
	case "fgrl", Subscribed:
		t := &transport.Transport{Base: base, Limits: o.Limits, TitleID: o.title(), LimitShare: o.LimitShare}
		if o.Coalesce {
			t.CoalesceReads, t.ReadCacheTTL = true, time.Second
		}
		return t
	}
	return base
}

// feed starts each of the events' calls that keep takes at its virtual
// time; overlapping events run at the same time.
// It stores in read, if not nil, how many events it has read for the last
// time.
func feed(ctx context.Context, v *clock.Virtual, ev Events, keep func(*Event) bool, end time.Duration, progress func(done, total time.Duration), start func(*Event), read *atomic.Int64) {
	sched := newSchedule(ev)
	sched.keep = keep
	var at time.Duration
	lastReport := time.Duration(-1)
	for {
		e, when, ok := sched.pop()
		if read != nil {
			read.Store(int64(sched.next))
		}
		if !ok {
			break
		}
		if v.Sleep(ctx, when-at) != nil {
			return
		}
		at = when
		start(e)
		if progress != nil && at-lastReport >= end/1000 {
			progress(at, end)
			lastReport = at
		}
	}
	if progress != nil {
		progress(end, end)
	}
}

type outcome int

const (
	served outcome = iota
	throttled
	refused
	failed
)

func (r *Result) count(o outcome) {
	switch o {
	case served:
		r.Served++
	case refused:
		r.Refused++
	case failed:
		r.Failed++
	}
}

// call makes one call of e and classifies how it ended.
func call(ctx context.Context, rt http.RoundTripper, o *Options, e *Event) outcome {
	method, url, body := request(o.service(), e)
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return failed
	}
	req.Header.Set("Authorization", mock.Token(e.User, o.title()))
	if e.Req != nil && e.Req.UserAgent != "" {
		req.Header.Set("User-Agent", e.Req.UserAgent)
	}
	if e.Background { // a background job: leaves the interactive share, waits up to 300 s for its budget
		req = req.WithContext(transport.WithPolicy(ctx, transport.Policy{MaxWait: transport.MaxPolicyWait, Priority: transport.Background}))
	}
	resp, err := rt.RoundTrip(req)
	var te *transport.ThrottleError
	switch {
	case errors.As(err, &te) && te.Local:
		return refused
	case errors.As(err, &te):
		return throttled
	case err != nil:
		return failed
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusTooManyRequests {
		return throttled
	}
	return served
}

func hostOf(r *limits.Rule) string {
	for _, h := range r.Hosts {
		if !strings.Contains(h, "*") {
			return h
		}
	}
	return strings.ReplaceAll(r.Hosts[0], "*", "x")
}

// request returns the event's call: its recorded request, or a realistic
// call for its service scope.
func request(l *limits.Limits, e *Event) (method, url, body string) {
	if e.Req != nil {
		return e.Req.Method, e.Req.URL, e.Req.Body
	}
	rule, _ := l.ByScope(e.Service)
	method, path, body := serviceCall(l, e)
	return method, "https://" + hostOf(rule) + path, body
}

// serviceCall returns a realistic call for a service scope.
func serviceCall(l *limits.Limits, e *Event) (method, path, body string) {
	switch e.Service {
	case "profile":
		return "GET", "/users/me/profile/settings?settings=Gamertag", ""
	case "presence/read":
		return "GET", "/users/xuid(" + e.User + ")", ""
	case "presence/write":
		return "POST", "/users/xuid(" + e.User + ")/devices/current/titles/current", `{"state":"active"}`
	case "social":
		return "GET", "/users/me/people", ""
	case "achievements":
		return "GET", "/users/xuid(" + e.User + ")/achievements", ""
	case "stats-read":
		return "GET", "/users/xuid(" + e.User + ")/scids/s/stats/kills", ""
	case "leaderboards":
		return "GET", "/scids/s/leaderboards/stat(kills)", ""
	case "mpsd":
		return "GET", "/serviceconfigs/s/sessiontemplates/t/sessions/n", ""
	case "mpsd-search-handle/read":
		return "POST", "/handles/query", `{}`
	case "smartmatch":
		return "POST", "/serviceconfigs/s/hoppers/h", `{"giveUpDuration":30,"preserveSession":"never","ticketSessionRef":{"scid":"s","templateName":"t","name":"n"}}`
	case "privacy":
		return "GET", "/users/xuid(" + e.User + ")/permission/validate?setting=CommunicateUsingText&target=xuid(" + e.User + ")", ""
	case "peoplehub":
		return "GET", "/users/me/people/social", ""
	case "titlehub":
		return "GET", "/users/me/titles/titlehistory/decoration/achievement", ""
	case "usersearch":
		return "GET", "/suggest?q=Player", ""
	case "reputation":
		return "POST", "/users/xuid(" + e.User + ")/feedback", `{"sessionRef":null,"feedbackType":"PositiveSkilledPlayer","textReason":"","evidenceId":null}`
	case "authentication": // 2022's title.mgt: the title's endpoints (NSAL)
		return "GET", "/titles/current/endpoints", ""
	}
	r, _ := l.ByScope(e.Service)
	method, path = "GET", "/"
	if len(r.Methods) > 0 {
		method = r.Methods[0]
	}
	if len(r.Paths) > 0 {
		path = strings.ReplaceAll(r.Paths[0], "*", e.User)
	}
	return method, path, ""
}
