package throttle_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// held: throttle's package doc: "the client budget (BudgetStore;
// MemoryBudgetStore in memory) never admits more than a limit in any
// sliding span of a period, so a caller that respects it is safe whatever
// window alignment the service uses"; Margin: "to absorb the delay between
// a client sending a request and the server counting it".
//
// Brute force: a server (MemoryServerStore, both alignments, at a random
// offset) counts each call a random delay under the margin after its
// booked slot; callers book with random maxWait (0 to 60 s), a quarter of
// the booked ones are cancelled and Released, every answer's counts are
// Synced (reset rounded up to whole seconds, as the service writes it), and
// a random Retry-After-free run must see no 429; every sliding span of each
// period holds at most its limit of the calls sent.
func TestAttackBudgetNeverDrawsA429(t *testing.T) {
	ctx := context.Background()
	rng := newAtkRand(100)
	for trial := range 400 {
		align := throttle.Align(trial % 2)
		srv := throttle.MemoryServerStore{Align: align}
		var b throttle.MemoryBudgetStore // DefaultMargin
		k := throttle.Key{User: "u", Title: "t", Scope: "s"}
		l := throttle.Limit{Burst: 1 + rng.intn(6), Sustain: 1 + rng.intn(25)}
		if rng.intn(4) == 0 {
			l.Burst = 0
		}
		now := attackBase.Add(time.Duration(rng.intn(1 << 40)))
		type pending struct {
			slot    time.Time
			arrive  time.Time
			id      int64
			cancel  bool
			settled bool
		}
		var books []*pending
		var sent []time.Time
		flush := func(upTo time.Time) {
			slices.SortStableFunc(books, func(a, c *pending) int { return a.arrive.Compare(c.arrive) })
			for _, p := range books {
				if p.settled || p.arrive.After(upTo) {
					continue
				}
				p.settled = true
				if p.cancel { // cancelled while it waited, before its slot
					b.Release(ctx, k, l, p.id)
					continue
				}
				sent = append(sent, p.slot)
				d, _ := srv.Take(ctx, k, l, p.arrive)
				if !d.Allowed {
					t.Fatalf("trial %d align %d %+v: 429 at %v (%+v)", trial, align, l, p.arrive.Sub(attackBase), d)
				}
				for _, per := range []throttle.Period{throttle.Burst, throttle.Sustain} {
					w := d.Window(per)
					reset := (w.Reset + time.Second - 1).Truncate(time.Second)
					b.Sync(ctx, k, l, p.arrive, per, w.Count, reset)
				}
			}
		}
		for range 150 {
			now = now.Add(time.Duration(rng.intn(3000)) * time.Millisecond * time.Duration(rng.intn(2)))
			flush(now)
			maxWait := time.Duration(0)
			if rng.intn(2) == 0 {
				maxWait = time.Duration(rng.intn(60)) * time.Second
			}
			a, _ := b.Reserve(ctx, k, l, now, maxWait)
			if !a.Allowed {
				continue
			}
			slot := now.Add(a.Wait)
			p := &pending{slot: slot, arrive: slot.Add(time.Duration(rng.intn(999)) * time.Millisecond), id: a.Slot}
			if a.Wait > 0 && rng.intn(4) == 0 {
				p.cancel, p.arrive = true, now.Add(a.Wait/2)
			}
			books = append(books, p)
		}
		flush(now.Add(time.Hour))
		slices.SortFunc(sent, func(a, c time.Time) int { return a.Compare(c) })
		for i := range sent {
			end := sent[i]
			if l.Burst > 0 && attackSent(sent, end, throttle.BurstPeriod) > l.Burst {
				t.Fatalf("trial %d: %d sent in the burst span ending %v", trial, attackSent(sent, end, throttle.BurstPeriod), end)
			}
			if attackSent(sent, end, throttle.SustainPeriod) > l.Sustain {
				t.Fatalf("trial %d: %d sent in the sustain span ending %v", trial, attackSent(sent, end, throttle.SustainPeriod), end)
			}
		}
	}
}
