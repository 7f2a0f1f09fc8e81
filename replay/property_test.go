package replay

import (
	"context"
	"math/rand/v2"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/throttle"
)

// cell is what one key saw in one 15 s interval.
type cell struct {
	Requests, Throttled, Burst, Sustain int
}

type cellKey struct {
	User, Scope string
	Interval    int
}

// bruteForce replays every call of p, in time order, through the server
// rule directly: what the service must have seen, independent of the
// simulator's clock, workers, transport and mock.
func bruteForce(p Pattern, l *limits.Limits) map[cellKey]cell {
	type call struct {
		at time.Duration
		e  *Event
		i  int
	}
	var calls []call
	for n := range p {
		for i := 0; i < p[n].Count; i++ {
			calls = append(calls, call{callTime(&p[n], i), &p[n], i})
		}
	}
	sort.SliceStable(calls, func(a, b int) bool { return calls[a].at < calls[b].at })
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var server throttle.MemoryServerStore
	out := map[cellKey]cell{}
	for _, c := range calls {
		r, _ := l.ByScope(c.e.Service)
		d, _ := server.Take(context.Background(), throttle.Key{User: c.e.User, Scope: r.Scope()}, r.Limit(), start.Add(c.at))
		ck := cellKey{c.e.User, r.Scope(), int(c.at / throttle.BurstPeriod)}
		got := out[ck]
		got.Requests++
		if !d.Allowed {
			got.Throttled++
		}
		got.Burst, got.Sustain = d.Burst.Count, d.Sustain.Count
		out[ck] = got
	}
	return out
}

// randomPattern makes up to 8 events over up to 3 users and 3 services,
// overlapping freely.
func randomPattern(rng *rand.Rand) Pattern {
	services := []string{"profile", "presence/write", "achievements"}
	var p Pattern
	for range 1 + rng.IntN(8) {
		p = append(p, Event{
			At:      time.Duration(rng.IntN(600_000)) * time.Millisecond,
			Service: services[rng.IntN(len(services))],
			User:    strconv.Itoa(2533274790000000 + rng.IntN(3)),
			Count:   1 + rng.IntN(60),
			Spread:  time.Duration(rng.IntN(120_000)) * time.Millisecond,
		})
	}
	return p
}

// TestSimulatorMatchesBruteForce: for random patterns, the plain client's
// per-key, per-interval table equals a brute-force replay of the same calls
// (the plain client sends each call once, at its time).
func TestSimulatorMatchesBruteForce(t *testing.T) {
	l := limits.Default()
	for seed := range uint64(40) {
		t.Run("seed "+strconv.FormatUint(seed, 10), func(t *testing.T) {
			p := randomPattern(rand.New(rand.NewPCG(seed, 1)))
			res, err := Run(context.Background(), p, Options{Limits: l, Client: "naive"})
			if err != nil {
				t.Fatal(err)
			}
			got := map[cellKey]cell{}
			for _, k := range res.Keys {
				for _, row := range k.Rows {
					if row.Requests == 0 {
						continue
					}
					got[cellKey{k.User, k.Scope, row.Start / 15}] = cell{row.Requests, row.Throttled, row.BurstCount, row.SustainCount}
				}
			}
			if diff := cmp.Diff(bruteForce(p, l), got); diff != "" {
				t.Errorf("pattern %+v: simulator mismatch (-brute force +simulator):\n%s", p, diff)
			}
			if res.Calls != p.Calls() || res.Served+throttledCalls(res) != res.Calls {
				t.Errorf("outcomes %+v do not add up to %d calls", res, p.Calls())
			}
		})
	}
}
