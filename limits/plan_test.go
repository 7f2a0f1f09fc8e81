package limits

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestPlan: the poll planner's verdicts on the 2020 table. Social every
// 10 s is exactly its sustain limit (30 per 300 s): nothing left, and 10 s
// is the fastest safe interval; every 9 s is over.
func TestPlan(t *testing.T) {
	l := Default()
	for _, tc := range []struct {
		name  string
		calls []PeriodicCall
		want  []PlanRow
	}{
		{"social every 10 s", []PeriodicCall{{"social", 10 * time.Second, 1}}, []PlanRow{{Scope: "social", PerTick: 1, Every: 10 * time.Second,
			BurstPeak: 2, SustainPeak: 30, Burst: 10, Sustain: 30, BurstLeft: 8, SustainLeft: 0, Fastest: 10 * time.Second}}},
		{"social every 9 s", []PeriodicCall{{"social", 9 * time.Second, 1}}, []PlanRow{{Scope: "social", PerTick: 1, Every: 9 * time.Second,
			BurstPeak: 2, SustainPeak: 34, Burst: 10, Sustain: 30, BurstLeft: 8, SustainLeft: -4, Fastest: 10 * time.Second}}},
		{"three presence lookups every 5 s, and profile", []PeriodicCall{{"presence/read", 5 * time.Second, 3}, {"profile", time.Minute, 1}}, []PlanRow{
			{Scope: "presence/read", PerTick: 3, Every: 5 * time.Second, BurstPeak: 9, SustainPeak: 180, Burst: 30, Sustain: 100,
				BurstLeft: 21, SustainLeft: -80, Fastest: 9091 * time.Millisecond, Batch: true},
			{Scope: "profile", PerTick: 1, Every: time.Minute, BurstPeak: 1, SustainPeak: 5, Burst: 10, Sustain: 30,
				BurstLeft: 9, SustainLeft: 25, Fastest: 10 * time.Second}}},
		{"more a tick than the burst", []PeriodicCall{{"profile", time.Minute, 11}}, []PlanRow{{Scope: "profile", PerTick: 11, Every: time.Minute,
			BurstPeak: 11, SustainPeak: 55, Burst: 10, Sustain: 30, BurstLeft: -1, SustainLeft: -25, Fastest: 0, Batch: true}}},
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
	// A rule without a burst limit (the Store services') is limited by its
	// sustain limit alone: zero means no limit, not none allowed.
	store, err := Parse([]byte(`{"rules": [{"service": "inventory", "hosts": ["inventory.xboxlive.com"], "sustain": 100}]}`))
	if err != nil {
		t.Fatal(err)
	}
	got, err := store.Plan([]PeriodicCall{{"inventory", 5 * time.Second, 2}})
	want := []PlanRow{{Scope: "inventory", PerTick: 2, Every: 5 * time.Second, BurstPeak: 6, SustainPeak: 120, Sustain: 100,
		BurstLeft: math.MaxInt32, SustainLeft: -20, Fastest: 6 * time.Second}}
	if d := cmp.Diff(want, got); err != nil || d != "" {
		t.Errorf("a sustain-only rule: %v (-want +got)\n%s", err, d)
	}
	for _, bad := range [][]PeriodicCall{{{"social", 0, 1}}, {{"social", time.Second, 0}}, {{"nope", time.Second, 1}}} {
		if _, err := l.Plan(bad); err == nil {
			t.Errorf("Plan(%v) took it", bad)
		}
	}
}
