package limits

import (
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// TestClientLimit: what one user of one title may send is the rule's
// burst and sustain, the sustain cut to the per-publisher one when that is
// lower (SPEC.md section 2: the Store services count {userId;titleId} and
// {userId;publisherId}; a title's calls count in both).
func TestClientLimit(t *testing.T) {
	for _, tc := range []struct {
		r    Rule
		want throttle.Limit
	}{
		{Rule{Burst: 0, Sustain: 100, PublisherSustain: 200}, throttle.Limit{Sustain: 100}}, // the 2020 table's Store rows
		{Rule{Burst: 100, Sustain: 100, PublisherSustain: 20}, throttle.Limit{Burst: 100, Sustain: 20}},
		{Rule{Burst: 10, Sustain: 30, PublisherSustain: 30}, throttle.Limit{Burst: 10, Sustain: 30}},
		{Rule{Burst: 10, Sustain: 30}, throttle.Limit{Burst: 10, Sustain: 30}},
		{Rule{Burst: 10, Sustain: 0, PublisherSustain: 5}, throttle.Limit{Burst: 10, Sustain: 5}}, // no title sustain: the publisher's is the one
	} {
		if got := tc.r.ClientLimit(); got != tc.want {
			t.Errorf("%+v: ClientLimit %+v, want %+v", tc.r, got, tc.want)
		}
		if got := tc.r.Limit(); got != (throttle.Limit{Burst: tc.r.Burst, Sustain: tc.r.Sustain}) {
			t.Errorf("%+v: Limit %+v, want the rule's own", tc.r, got)
		}
	}
}

// TestPlanPublisherSustain: the planner plans for the client's limit: a
// publisher sustain of 20 under a sustain of 100 makes 30 calls in 300 s
// over, and the fastest interval the one of 20 calls in 300 s.
func TestPlanPublisherSustain(t *testing.T) {
	l, err := Read(strings.NewReader(`{"rules": [{"service": "collections", "hosts": ["collections.mp.microsoft.com"], "burst": 100, "sustain": 100, "publisherSustain": 20, "store": true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := l.PlanFor([]PeriodicCall{{"collections", 10 * time.Second, 1}}, PlanClient{})
	if err != nil {
		t.Fatal(err)
	}
	r := rows[0]
	if r.Sustain != 20 || r.SustainPeak != 30 || r.Safe() || r.Plain != 15*time.Second || r.Fastest != 15*time.Second {
		t.Errorf("row %+v: want sustain 20, 30 in the busiest 300 s, over, fastest and plain 15 s", r)
	}
}

// TestPlanBatchOfAScopeGivenTwice: Batch is about the calls of a scope a
// tick, however the periodic calls are given: two of one call each at the
// same interval are two a tick, as one of two.
func TestPlanBatchOfAScopeGivenTwice(t *testing.T) {
	l := Default()
	for _, tc := range []struct {
		calls []PeriodicCall
		want  bool
	}{
		{[]PeriodicCall{{"profile", 20 * time.Second, 2}}, true},
		{[]PeriodicCall{{"profile", 20 * time.Second, 1}, {"profile", 20 * time.Second, 1}}, true},
		{[]PeriodicCall{{"profile", 20 * time.Second, 1}, {"profile", 30 * time.Second, 1}}, true}, // both at 0
		{[]PeriodicCall{{"profile", 20 * time.Second, 1}}, false},
		{[]PeriodicCall{{"social", 20 * time.Second, 1}, {"social", 20 * time.Second, 1}}, false}, // no batch call
	} {
		rows, err := l.PlanFor(tc.calls, PlanClient{})
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1 || rows[0].Batch != tc.want {
			t.Errorf("%v: rows %+v, want one with Batch %v", tc.calls, rows, tc.want)
		}
	}
}

// TestServiceWithColonRefused: a service or class may not hold ':' (a
// plan writes SCOPE:EVERY; the transport's key for a host no rule has is
// "host:" + the host).
func TestServiceWithColonRefused(t *testing.T) {
	for _, rule := range []string{
		`{"service": "title:storage", "hosts": ["a.example.com"], "burst": 1, "sustain": 1}`,
		`{"service": "host", "class": ":x", "hosts": ["a.example.com"], "burst": 1, "sustain": 1}`,
	} {
		_, err := Read(strings.NewReader(`{"rules": [` + rule + `]}`))
		if err == nil || !strings.Contains(err.Error(), "':'") {
			t.Errorf("%s: %v, want refused naming ':'", rule, err)
		}
	}
}

// TestPlanRowSafe: a row is safe while nothing is over, at a limit
// exactly (0 left) included.
func TestPlanRowSafe(t *testing.T) {
	for _, tc := range []struct {
		burst, sustain int
		want           bool
	}{{0, 0, true}, {1, 1, true}, {-1, 0, false}, {0, -1, false}, {-1, -1, false}} {
		if got := (PlanRow{BurstLeft: tc.burst, SustainLeft: tc.sustain}).Safe(); got != tc.want {
			t.Errorf("left %d / %d: Safe %v, want %v", tc.burst, tc.sustain, got, tc.want)
		}
	}
}
