package limits

import (
	"math"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/xblgo/fgrl/throttle"
)

// TestPlan: the poll planner's verdicts on the 2020 table. Social every
// 10 s is exactly its sustain limit (30 per 300 s): nothing left, and 10 s
// is the fastest safe interval; every 9 s is over. Social and presence
// name the RTA resource that makes polling them needless (XSAPI's
// social_relationship_change_subscription.cpp,
// device_presence_change_subscription.cpp); profile has none.
func TestPlan(t *testing.T) {
	l := Default()
	for _, tc := range []struct {
		name  string
		calls []PeriodicCall
		want  []PlanRow
	}{
		{"social every 10 s", []PeriodicCall{{"social", 10 * time.Second, 1}}, []PlanRow{{Scope: "social", PerTick: 1, Every: 10 * time.Second,
			BurstPeak: 2, SustainPeak: 30, Burst: 10, Sustain: 30, BurstLeft: 8, SustainLeft: 0, Fastest: 10 * time.Second, Plain: 10 * time.Second, Subscription: SubscriptionFor("social")}}},
		{"social every 9 s", []PeriodicCall{{"social", 9 * time.Second, 1}}, []PlanRow{{Scope: "social", PerTick: 1, Every: 9 * time.Second,
			BurstPeak: 2, SustainPeak: 34, Burst: 10, Sustain: 30, BurstLeft: 8, SustainLeft: -4, Fastest: 10 * time.Second, Plain: 10 * time.Second, Subscription: SubscriptionFor("social")}}},
		{"three presence lookups every 5 s, and profile", []PeriodicCall{{"presence/read", 5 * time.Second, 3}, {"profile", time.Minute, 1}}, []PlanRow{
			{Scope: "presence/read", PerTick: 3, Every: 5 * time.Second, BurstPeak: 9, SustainPeak: 180, Burst: 30, Sustain: 100,
				BurstLeft: 21, SustainLeft: -80, Fastest: 9091 * time.Millisecond, Plain: 9091 * time.Millisecond, Batch: true, Subscription: SubscriptionFor("presence/read")},
			{Scope: "profile", PerTick: 1, Every: time.Minute, BurstPeak: 1, SustainPeak: 5, Burst: 10, Sustain: 30,
				BurstLeft: 9, SustainLeft: 25, Fastest: 10 * time.Second, Plain: 10 * time.Second}}},
		{"more a tick than the burst", []PeriodicCall{{"profile", time.Minute, 11}}, []PlanRow{{Scope: "profile", PerTick: 11, Every: time.Minute,
			BurstPeak: 11, SustainPeak: 55, Burst: 10, Sustain: 30, BurstLeft: -1, SustainLeft: -25, Fastest: 0, Plain: 0, Batch: true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := l.Plan(tc.calls)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
	for scope, want := range map[string]string{"social": "http://social.xboxlive.com/users/xuid(XUID)/friends", "profile": ""} {
		if got := SubscriptionFor(scope); got != want {
			t.Errorf("SubscriptionFor(%q) = %q, want %q", scope, got, want)
		}
	}
	// A rule without a burst limit (the Store services') is limited by its
	// sustain limit alone: zero means no limit, not none allowed.
	store, err := read(`{"rules": [{"service": "inventory", "hosts": ["inventory.xboxlive.com"], "sustain": 100}]}`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := store.Plan([]PeriodicCall{{"inventory", 5 * time.Second, 2}})
	want := []PlanRow{{Scope: "inventory", PerTick: 2, Every: 5 * time.Second, BurstPeak: 6, SustainPeak: 120, Sustain: 100,
		BurstLeft: math.MaxInt32, SustainLeft: -20, Fastest: 6 * time.Second, Plain: 6 * time.Second}}
	if d := cmp.Diff(want, got); err != nil || d != "" {
		t.Errorf("a sustain-only rule: %v (-want +got)\n%s", err, d)
	}
	for _, bad := range [][]PeriodicCall{{{"social", 0, 1}}, {{"social", time.Second, 0}}, {{"nope", time.Second, 1}}} {
		if _, err := l.Plan(bad); err == nil {
			t.Errorf("Plan(%v) took it", bad)
		}
	}
}

// TestPlanBounds: Plan refuses intervals, counts and peaks outside its
// bounds, naming the bound, and takes the calls at them; before the
// bounds, a count of 2^63-1 every 1 ns planned a peak of -15e9 calls and
// the verdict "ok", and an interval near 2^63 ns overflowed ceil(w/every).
func TestPlanBounds(t *testing.T) {
	l := Default()
	for _, tc := range []struct {
		name  string
		calls []PeriodicCall
		want  string // the error; "" when taken
	}{
		{"every 1 ns", []PeriodicCall{{"social", time.Nanosecond, 1}}, "limits: plan: call 0: an interval of 1ns: want 1ms to 168h0m0s"},
		{"every 0", []PeriodicCall{{"social", 0, 1}}, "limits: plan: call 0: an interval of 0s: want 1ms to 168h0m0s"},
		{"every -1 s", []PeriodicCall{{"social", -time.Second, 1}}, "limits: plan: call 0: an interval of -1s: want 1ms to 168h0m0s"},
		{"every 2^63-1 ns", []PeriodicCall{{"social", math.MaxInt64, 1}}, "limits: plan: call 0: an interval of 2562047h47m16.854775807s: want 1ms to 168h0m0s"},
		{"every 1 ms", []PeriodicCall{{"social", MinPlanInterval, 1}}, ""},
		{"every week", []PeriodicCall{{"social", MaxPlanInterval, 1}}, ""},
		{"a week and 1 ns", []PeriodicCall{{"social", MaxPlanInterval + 1, 1}}, "limits: plan: call 0: an interval of 168h0m0.000000001s: want 1ms to 168h0m0s"},
		{"count 0", []PeriodicCall{{"social", time.Second, 0}}, "limits: plan: call 0: a count of 0: want 1 to 100000 calls a tick"},
		{"count 2^63-1", []PeriodicCall{{"social", time.Second, math.MaxInt}}, "limits: plan: call 0: a count of 9223372036854775807: want 1 to 100000 calls a tick"},
		{"count 100000 every 1 s", []PeriodicCall{{"social", time.Second, MaxPlanCount}}, ""},
		{"count 100001, the second call", []PeriodicCall{{"profile", time.Second, 1}, {"social", time.Second, MaxPlanCount + 1}}, "limits: plan: call 1: a count of 100001: want 1 to 100000 calls a tick"},
		{"a peak of 3e10 (100000 every 1 ms)", []PeriodicCall{{"social", MinPlanInterval, MaxPlanCount}},
			`limits: plan: scope "social": its calls in the busiest 5m0s window pass 1000000000, the most a plan may make`},
		{"a peak of exactly 1e9 (3333 every 1 ms, 100000 every 300 s)", []PeriodicCall{
			{"social", MinPlanInterval, 3333}, {"social", 300 * time.Second, MaxPlanCount}}, ""},
		{"one call past the peak", []PeriodicCall{
			{"social", MinPlanInterval, 3333}, {"social", 300 * time.Second, MaxPlanCount}, {"social", MaxPlanInterval, 1}},
			`limits: plan: scope "social": its calls in the busiest 5m0s window pass 1000000000, the most a plan may make`},
		{"an unknown scope, clipped and escaped", []PeriodicCall{{"\x1b[2J" + strings.Repeat("x", 100), time.Second, 1}},
			`limits: plan: call 0: no rule has scope "\x1b[2Jxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx..." (have ` + strings.Join(l.Scopes(), ", ") + ")"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := l.Plan(tc.calls)
			if got := errText(err); got != tc.want {
				t.Errorf("Plan(%v):\n got %s\nwant %s", tc.calls, got, tc.want)
			}
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// FuzzPlan: for any two periodic calls of one scope and one of another,
// and any margin, PlanFor either refuses them, and then one is outside a
// bound, or its rows
// hold the exact figures (computed in arbitrary precision), each within
// MaxPlanPeak, the burst peak within the sustain peak.
func FuzzPlan(f *testing.F) {
	f.Add(int64(10*time.Second), 1, int64(time.Minute), 3, int64(time.Second), 2, int64(0))
	f.Add(int64(1), math.MaxInt, int64(math.MaxInt64), 1, int64(-1), 0, int64(-1))
	f.Add(int64(time.Millisecond), 3333, int64(300*time.Second), 100000, int64(time.Millisecond), 100000, int64(300*time.Second))
	l := Default()
	f.Fuzz(func(t *testing.T, e1 int64, n1 int, e2 int64, n2 int, e3 int64, n3 int, m int64) {
		calls := []PeriodicCall{{"social", time.Duration(e1), n1}, {"social", time.Duration(e2), n2}, {"profile", time.Duration(e3), n3}}
		margin := time.Duration(m)
		inBounds := margin >= 0 && margin <= throttle.SustainPeriod
		for _, c := range calls {
			inBounds = inBounds && c.Every >= MinPlanInterval && c.Every <= MaxPlanInterval && c.Count >= 1 && c.Count <= MaxPlanCount
		}
		exact := map[string][3]*big.Int{} // per tick, burst peak, sustain peak
		if inBounds {
			for _, c := range calls {
				sums, ok := exact[c.Scope]
				if !ok {
					sums = [3]*big.Int{new(big.Int), new(big.Int), new(big.Int)}
					exact[c.Scope] = sums
				}
				n := big.NewInt(int64(c.Count))
				sums[0].Add(sums[0], n)
				for i, w := range []time.Duration{throttle.BurstPeriod + margin, throttle.SustainPeriod + margin} {
					ticks := new(big.Int).Add(big.NewInt(int64(w)), big.NewInt(int64(c.Every)-1))
					ticks.Quo(ticks, big.NewInt(int64(c.Every)))
					sums[i+1].Add(sums[i+1], ticks.Mul(ticks, n))
				}
			}
		}
		over := false
		for _, sums := range exact {
			over = over || sums[2].Cmp(big.NewInt(MaxPlanPeak)) > 0
		}
		rows, err := l.PlanFor(calls, PlanClient{Margin: margin})
		if err != nil {
			if inBounds && !over {
				t.Fatalf("Plan(%v) refused calls within the bounds: %v", calls, err)
			}
			return
		}
		if !inBounds || over {
			t.Fatalf("Plan(%v) took calls outside the bounds: %+v", calls, rows)
		}
		for _, r := range rows {
			sums := exact[r.Scope]
			got := [3]int{r.PerTick, r.BurstPeak, r.SustainPeak}
			for i := range got {
				if !sums[i].IsInt64() || int64(got[i]) != sums[i].Int64() {
					t.Errorf("%s: figure %d is %d, want %v", r.Scope, i, got[i], sums[i])
				}
			}
			if r.BurstPeak > r.SustainPeak || r.SustainPeak > MaxPlanPeak || r.BurstLeft != r.Burst-r.BurstPeak || r.SustainLeft != r.Sustain-r.SustainPeak {
				t.Errorf("row out of shape: %+v", r)
			}
		}
	})
}

// TestPlanForClient: the planner for a client with a budget. A margin
// lengthens both windows: social every 10 s is exactly a plain client's
// sustain limit, one call over with a 1 s margin (31 ticks in 301 s), and
// the client's fastest interval is 301 s / 30, rounded up to the
// millisecond, the plain client's 10 s beside it. A client that lets the
// calls use 90 % of each limit plans against 9 / 27.
func TestPlanForClient(t *testing.T) {
	l := Default()
	ninety := func(lim throttle.Limit) throttle.Limit {
		return throttle.Limit{Burst: lim.Burst * 9 / 10, Sustain: lim.Sustain * 9 / 10}
	}
	for _, tc := range []struct {
		name   string
		client PlanClient
		want   PlanRow
	}{
		{"a plain client", PlanClient{}, PlanRow{Scope: "social", PerTick: 1, Every: 10 * time.Second, BurstPeak: 2, SustainPeak: 30,
			Burst: 10, Sustain: 30, BurstLeft: 8, SustainLeft: 0, Fastest: 10 * time.Second, Plain: 10 * time.Second, Subscription: SubscriptionFor("social")}},
		{"a 1 s margin", PlanClient{Margin: time.Second}, PlanRow{Scope: "social", PerTick: 1, Every: 10 * time.Second, BurstPeak: 2, SustainPeak: 31,
			Burst: 10, Sustain: 30, BurstLeft: 8, SustainLeft: -1, Fastest: 10034 * time.Millisecond, Plain: 10 * time.Second, Subscription: SubscriptionFor("social")}},
		{"a 1 s margin and 90 %", PlanClient{Margin: time.Second, Limit: ninety}, PlanRow{Scope: "social", PerTick: 1, Every: 10 * time.Second,
			BurstPeak: 2, SustainPeak: 31, Burst: 9, Sustain: 27, BurstLeft: 7, SustainLeft: -4, Fastest: 11149 * time.Millisecond, Plain: 10 * time.Second, Subscription: SubscriptionFor("social")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := l.PlanFor([]PeriodicCall{{"social", 10 * time.Second, 1}}, tc.client)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff([]PlanRow{tc.want}, got); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
	for _, m := range []time.Duration{-time.Nanosecond, throttle.SustainPeriod + 1} {
		if _, err := l.PlanFor([]PeriodicCall{{"social", 10 * time.Second, 1}}, PlanClient{Margin: m}); err == nil {
			t.Errorf("PlanFor took a margin of %v", m)
		}
	}
}

// TestPlanMarginWidensWindows: a client's margin lengthens both windows the
// plan counts in and the fastest interval it gives; a margin of the whole
// sustain period is the largest taken.
func TestPlanMarginWidensWindows(t *testing.T) {
	// Burst-bound (2 a 15 s, 1,000 a 300 s): one call every 16 s / 2 with a
	// 1 s margin, not 15 s / 2.
	if got, want := fastest(1, throttle.Limit{Burst: 2, Sustain: 1000}, time.Second), 8*time.Second; got != want {
		t.Errorf("fastest with a 1 s margin, burst-bound: %v, want %v", got, want)
	}
	if got, want := fastest(1, throttle.Limit{Burst: 2, Sustain: 1000}, 0), 7500*time.Millisecond; got != want {
		t.Errorf("fastest without a margin, burst-bound: %v, want %v", got, want)
	}
	l := Default()
	// Social every 15 s: a 16 s burst window holds the calls at 0 and 15 s;
	// a 15 s one holds one.
	for _, tc := range []struct {
		margin time.Duration
		want   int
	}{{0, 1}, {time.Second, 2}} {
		rows, err := l.PlanFor([]PeriodicCall{{"social", 15 * time.Second, 1}}, PlanClient{Margin: tc.margin})
		if err != nil {
			t.Fatal(err)
		}
		if rows[0].BurstPeak != tc.want {
			t.Errorf("margin %v: burst peak %d, want %d", tc.margin, rows[0].BurstPeak, tc.want)
		}
	}
	if _, err := l.PlanFor([]PeriodicCall{{"social", time.Minute, 1}}, PlanClient{Margin: throttle.SustainPeriod}); err != nil {
		t.Errorf("a margin of the sustain period: %v, want a plan", err)
	}
	if _, err := l.PlanFor([]PeriodicCall{{"social", time.Minute, 1}}, PlanClient{Margin: throttle.SustainPeriod + time.Millisecond}); err == nil {
		t.Error("a margin past the sustain period: planned, want an error")
	}
}
