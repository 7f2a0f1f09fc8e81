package limits

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/throttle"
)

// PeriodicCall is a call an application makes on a timer, for one user:
// Count calls of a rule's scope (Count users looked up one by one, say)
// every Every.
type PeriodicCall struct {
	Scope string
	Every time.Duration
	Count int
}

// PlanClient is how a client admits calls, as the planner models it. The
// zero PlanClient is a plain client: it sends every call when it is made,
// and only the service's windows count them. The fgrl transport's is
// transport.Transport.PlanClient: its margin, its limit share and, for
// background calls, the share it keeps for interactive ones.
type PlanClient struct {
	// Margin lengthens both windows: the client sends a call only while
	// the calls of the last period plus Margin leave room for it
	// (throttle.BudgetStore), so a tick that the service's window would
	// just admit waits for the margin. Zero is none (unlike the
	// transport's zero Margin, which means throttle.DefaultMargin).
	Margin time.Duration
	// Limit is the part of a rule's limits that the client lets the calls
	// use; nil means all of them.
	Limit func(throttle.Limit) throttle.Limit
}

// PlanRow is the poll planner's verdict on one scope for one client: the
// calls the periodic calls make in the worst-placed burst and sustain
// windows of the client (windows start at a request, as the service's
// do, and are the client's Margin longer; the calls of a tick come
// together), what is left of the limits the client lets them use, and
// the fastest interval at which the client sends every call of a tick at
// once, beside a plain client's.
type PlanRow struct {
	Scope          string
	PerTick        int           // calls of the scope a tick, when they share one interval
	Every          time.Duration // their interval; 0 when the scope's calls have several
	BurstPeak      int           // calls in the client's busiest burst window (15 s and its margin)
	SustainPeak    int           // calls in the client's busiest sustain window (300 s and its margin)
	Burst, Sustain int           // the limits the client lets the calls use (the rule's for a plain client)
	// BurstLeft and SustainLeft are the calls left in those windows:
	// 0 is exactly at a limit (one more call waits, or is a 429 from a
	// plain client), negative is over.
	BurstLeft, SustainLeft int
	// Fastest is the shortest interval at which PerTick calls a tick stay
	// within both of the client's windows, so it delays and refuses none;
	// 0 when no interval does (more calls a tick than a limit).
	Fastest time.Duration
	// Plain is the same for a plain client under the rule's limits: the
	// fastest interval the service answers without a 429.
	Plain time.Duration
	// Batch is true when a tick makes several calls of a scope that has a
	// batch call (profile, presence, user stats, people hub): one batch
	// call could carry them.
	Batch bool
	// Subscription is the Real-Time Activity resource that pushes the
	// scope's changes, so that they need no polling (SubscriptionFor); ""
	// when the scope has none.
	Subscription string
}

// Safe reports whether the scope's periodic calls stay within the
// client's windows: it sends each call when it is made.
func (p PlanRow) Safe() bool { return p.BurstLeft >= 0 && p.SustainLeft >= 0 }

// subscriptions are the scopes whose changes the Real-Time Activity
// service pushes, with the resource XSAPI subscribes to for them
// (microsoft/xbox-live-api: Source/Services/Presence/
// device_presence_change_subscription.cpp and
// title_presence_change_subscription.cpp, Social/
// social_relationship_change_subscription.cpp, Multiplayer/
// multiplayer_subscription.cpp).
var subscriptions = map[string]string{
	"presence/read": "https://userpresence.xboxlive.com/users/xuid(XUID)/devices and .../titles/TITLE",
	"social":        "http://social.xboxlive.com/users/xuid(XUID)/friends",
	"mpsd":          "https://sessiondirectory.xboxlive.com/connections/ (a shoulder tap when a session changes)",
}

// SubscriptionFor returns the Real-Time Activity resource whose events
// carry the changes of scope (a rule's scope, such as "presence/read"),
// or "" when polling is the only way to see them.
func SubscriptionFor(scope string) string { return subscriptions[scope] }

// batchable are the scopes whose services take several users in one call.
var batchable = map[string]bool{"profile": true, "presence/read": true, "stats-read": true, "peoplehub": true}

// Bounds of a plan: Plan refuses periodic calls outside them, so that
// every figure of a row fits in 32 bits and no product overflows.
const (
	// MinPlanInterval is the shortest interval a periodic call may have:
	// 300,000 ticks in a sustain window.
	MinPlanInterval = time.Millisecond
	// MaxPlanInterval is the longest: a week, one tick in any window.
	MaxPlanInterval = 7 * 24 * time.Hour
	// MaxPlanCount is the most calls a tick: the highest limit a rule may
	// have (throttle.MaxLimit).
	MaxPlanCount = throttle.MaxLimit
	// MaxPlanPeak is the most calls a scope's periodic calls may make in
	// its busiest sustain window (300 s).
	MaxPlanPeak = 1_000_000_000
)

// Plan answers, for a set of periodic calls of one user, each scope's
// busiest windows, what is left of its limits and its fastest safe
// interval, for a plain client: PlanFor with the zero PlanClient.
func (l *Limits) Plan(calls []PeriodicCall) ([]PlanRow, error) {
	return l.PlanFor(calls, PlanClient{})
}

// PlanFor is the poll planner (xblcall limits plan) for client c: for a
// set of periodic calls of one user, each scope's busiest windows of the
// client, what is left of the limits it lets them use and its fastest
// interval that sends every call at once, with a plain client's beside
// it. It refuses calls outside the bounds above, naming the bound, and a
// scope no rule has, naming those that rules have.
func (l *Limits) PlanFor(calls []PeriodicCall, c PlanClient) ([]PlanRow, error) {
	if c.Margin < 0 || c.Margin > throttle.SustainPeriod {
		return nil, fmt.Errorf("limits: plan: a margin of %v: want 0 to %v", c.Margin, throttle.SustainPeriod)
	}
	by := map[string][]PeriodicCall{}
	for i, pc := range calls {
		switch {
		case pc.Every < MinPlanInterval || pc.Every > MaxPlanInterval:
			return nil, fmt.Errorf("limits: plan: call %d: an interval of %v: want %v to %v", i, pc.Every, MinPlanInterval, MaxPlanInterval)
		case pc.Count < 1 || pc.Count > MaxPlanCount:
			return nil, fmt.Errorf("limits: plan: call %d: a count of %d: want 1 to %d calls a tick", i, pc.Count, MaxPlanCount)
		}
		if _, ok := l.ByScope(pc.Scope); !ok {
			return nil, fmt.Errorf("limits: plan: call %d: no rule has scope %s (have %s)", i, safetext.Quote(pc.Scope, 60), strings.Join(l.Scopes(), ", "))
		}
		by[pc.Scope] = append(by[pc.Scope], pc)
	}
	rows := make([]PlanRow, 0, len(by))
	for scope, cs := range by {
		r, _ := l.ByScope(scope)
		row, err := plan(scope, r.ClientLimit(), c, cs)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	slices.SortFunc(rows, func(a, b PlanRow) int { return strings.Compare(a.Scope, b.Scope) })
	return rows, nil
}

// plan is one scope's row. Its sums are of 64-bit products under
// MaxPlanCount x ceil(600 s / MinPlanInterval) = 6e10 each, stopped once
// past MaxPlanPeak: none overflows.
func plan(scope string, rule throttle.Limit, c PlanClient, cs []PeriodicCall) (PlanRow, error) {
	lim := rule
	if c.Limit != nil {
		lim = c.Limit(rule)
	}
	burstW, sustainW := throttle.BurstPeriod+c.Margin, throttle.SustainPeriod+c.Margin
	row := PlanRow{Scope: scope, Burst: lim.Burst, Sustain: lim.Sustain, Every: cs[0].Every, Subscription: subscriptions[scope]}
	var perTick, burst, sustain int64
	for _, pc := range cs {
		n := int64(pc.Count)
		perTick += n
		burst += n * ticksIn(burstW, pc.Every)
		sustain += n * ticksIn(sustainW, pc.Every) // the largest of the two
		if sustain > MaxPlanPeak {
			return PlanRow{}, fmt.Errorf("limits: plan: scope %s: its calls in the busiest %v window pass %d, the most a plan may make",
				safetext.Quote(scope, 60), sustainW, MaxPlanPeak)
		}
		if pc.Every != row.Every {
			row.Every = 0
		}
	}
	row.Batch = batchable[scope] && perTick > 1 // every periodic call has a tick at 0
	row.PerTick, row.BurstPeak, row.SustainPeak = int(perTick), int(burst), int(sustain)
	row.BurstLeft, row.SustainLeft = left(lim.Burst, row.BurstPeak), left(lim.Sustain, row.SustainPeak)
	row.Fastest = fastest(row.PerTick, lim, c.Margin)
	row.Plain = fastest(row.PerTick, rule, 0)
	return row, nil
}

// ticksIn is how many ticks every apart fit in a window of length w that
// starts at one: ceil(w / every).
func ticksIn(w, every time.Duration) int64 {
	return int64(ceilDiv(w, every))
}

// ceilDiv is ceil(a / b) for positive a and b, without the overflow of
// (a + b - 1) / b.
func ceilDiv(a, b time.Duration) time.Duration {
	q := a / b
	if a%b != 0 {
		q++
	}
	return q
}

// left is what is left of a limit (none: no limit, as much as asked).
func left(limit, peak int) int {
	if limit <= 0 {
		return math.MaxInt32
	}
	return limit - peak
}

// fastest is the shortest interval at which k calls a tick fit both
// windows, each margin longer: a window of w and limit n takes floor(n/k)
// ticks, so ticks at least w / floor(n/k) apart, rounded up to the
// millisecond (the nanoseconds the division drops never carry the result
// past a millisecond when w is whole milliseconds, as a margin the CLI
// takes is).
func fastest(k int, l throttle.Limit, margin time.Duration) time.Duration {
	var t time.Duration
	for _, w := range []struct {
		period time.Duration
		limit  int
	}{{throttle.BurstPeriod + margin, l.Burst}, {throttle.SustainPeriod + margin, l.Sustain}} {
		if w.limit <= 0 {
			continue
		}
		m := w.limit / k
		if m == 0 {
			return 0
		}
		t = max(t, ceilDiv(w.period, time.Duration(m)))
	}
	return (t + time.Millisecond - 1).Truncate(time.Millisecond) // a millisecond more never hurts
}
