package transport

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// attack36HostileLimitStore is a fleet's store whose Learned answers what the
// test sets (a store another party wrote into, or one on a clock far from
// the replica's).
type attack36HostileLimitStore struct {
	*throttle.MemoryBudgetStore
	mu  sync.Mutex
	out func(now time.Time) []throttle.Learned
}

func (s *attack36HostileLimitStore) Learned(ctx context.Context, now time.Time) ([]throttle.Learned, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.out == nil {
		return nil, nil
	}
	return s.out(now), nil
}

func attack36HostileTransport(store *attack36HostileLimitStore) (*Transport, func() []Event) {
	base, _ := attack35Served(map[string]int{})
	var mu sync.Mutex
	var events []Event
	tr := &Transport{Base: base, TitleID: title, Budget: store, RetryWindow: -1, Observe: func(_ context.Context, e Event) {
		if e.Kind == EventLimitLearned {
			mu.Lock()
			events = append(events, e)
			mu.Unlock()
		}
	}}
	return tr, func() []Event {
		mu.Lock()
		defer mu.Unlock()
		return append([]Event(nil), events...)
	}
}

// TestAttack36StoreScopeTextRawInEvents: the store's read brings a scope of
// 20,000 bytes with terminal escapes (no rule of the limits data has it, and
// it is no "host:" scope). LearnedLimits shows it escaped and clipped
// (scopeText); the EventLimitLearned of the same change carries it raw and
// whole in Event.Scope, and the Logger logs it so ("scope" attr). The
// transport also keeps a scope longer than throttle.MaxScopeLen, which it
// refuses from a 429 (learn).
func TestAttack36StoreScopeTextRawInEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		evil := "x\x1b[2J\x1b]0;pwned\x07\r\n" + strings.Repeat("A", 20000)
		store := &attack36HostileLimitStore{MemoryBudgetStore: &throttle.MemoryBudgetStore{}}
		store.out = func(now time.Time) []throttle.Learned {
			return []throttle.Learned{{Scope: evil, Period: throttle.Burst, Limit: 5, Until: now.Add(time.Minute)}}
		}
		tr, evs := attack36HostileTransport(store)
		attack31ProfileAs(tr, attack35A)
		for _, l := range tr.LearnedLimits() {
			if strings.ContainsAny(l.Scope, "\x1b\x07\r\n") || len(l.Scope) > 4*throttle.MaxScopeLen {
				t.Errorf("LearnedLimits shows the store's scope raw (%d bytes)", len(l.Scope))
			}
		}
		for _, e := range evs() {
			if strings.ContainsAny(e.Scope, "\x1b\x07\r\n") || len(e.Scope) > 4*throttle.MaxScopeLen {
				t.Errorf("an EventLimitLearned (%q) carries the shared store's scope text raw: %d bytes, escapes and CR LF included (%q...), where LearnedLimits shows it escaped and clipped; "+
					"RELIABILITY.md, Secrets and hostile text: server text is kept \"at most 200 bytes of it, escaped (`\\x1b`)\", and \"a Redis answering every script with a 100 kB error line ending in terminal escapes\" gets \"the server's text clipped and escaped to 200 bytes\"; "+
					"eventScope: \"so that an observer's series stay those of the limits data\"",
					e.Reason, len(e.Scope), e.Scope[:min(len(e.Scope), 24)])
				break
			}
		}
		for w := range tr.scopeMap() {
			if len(w.scope) > throttle.MaxScopeLen {
				t.Errorf("the transport keeps a learned scope of %d bytes read from the store, over throttle.MaxScopeLen (%d), a bound learn() holds a 429's scope to: "+
					"throttle.MaxScopeLen: \"Bounds on learned limits, so a hostile service cannot grow them\"", len(w.scope), throttle.MaxScopeLen)
				break
			}
		}
	})
}

// TestAttack36StoreReadOfEndedLimitReportedInForce: a store whose clock is behind
// the replica's (redisstore without CallerTime), or a hostile one, answers
// profile's burst 6 with an Until already past on the replica's clock. The
// read puts it in the transport's map and tells the observer "burst 6 for
// every user of the scope, read from the shared store", but LearnedLimits
// lists nothing and calls count against the table's 10 (limitOf): the
// observer and the calls disagree.
func TestAttack36StoreReadOfEndedLimitReportedInForce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &attack36HostileLimitStore{MemoryBudgetStore: &throttle.MemoryBudgetStore{}}
		store.out = func(now time.Time) []throttle.Learned {
			return []throttle.Learned{{Scope: "profile", Period: throttle.Burst, Limit: 6, Until: now.Add(-time.Second)}}
		}
		tr, evs := attack36HostileTransport(store)
		attack31ProfileAs(tr, attack35A)
		said := false
		for _, e := range evs() {
			if strings.Contains(e.Reason, "burst 6 for every user of the scope, read from the shared store") {
				said = true
			}
		}
		listed := attack31LearnedBurst(tr)
		lim := tr.limitOf(context.Background(), throttle.Key{Scope: "profile", User: attack35A}, throttle.Limit{Burst: 10, Sustain: 30}, time.Now())
		if said && (listed != 6 || lim.Burst != 6) {
			t.Errorf("an EventLimitLearned said \"burst 6 for every user of the scope, read from the shared store\", but LearnedLimits lists burst %d and calls count against burst %d (limitOf): "+
				"the store's limit had ended (Until in the past on this clock); EventLimitLearned: \"a read of a fleet's store (Transport.Budget) put its limit in force ... Once per change\"; "+
				"throttle.LimitStore.Learned: \"returns the limits in force at now\"", listed, lim.Burst)
		}
	})
}

// TestAttack36StoreThousandsOfScopes: a store answering 5,000 scopes' both
// windows (LimitStore.Learned promises "at most both windows of MaxLearned
// scopes"): the transport keeps every one of them. A 429 can never grow
// the map past 2*MaxLearned (setScope); the store's read can, without bound.
func TestAttack36StoreThousandsOfScopes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &attack36HostileLimitStore{MemoryBudgetStore: &throttle.MemoryBudgetStore{}}
		store.out = func(now time.Time) []throttle.Learned {
			var out []throttle.Learned
			for i := range 5000 {
				s := "s" + strings.Repeat("z", 8) + string(rune('a'+i%26)) + attack36Itoa(i)
				out = append(out, throttle.Learned{Scope: s, Period: throttle.Burst, Limit: 5, Until: now.Add(time.Minute)},
					throttle.Learned{Scope: s, Period: throttle.Sustain, Limit: 5, Until: now.Add(time.Minute)})
			}
			return out
		}
		tr, evs := attack36HostileTransport(store)
		attack31ProfileAs(tr, attack35A)
		if n := len(tr.scopeMap()); n > 2*throttle.MaxLearned {
			t.Errorf("one read of a store answering 5,000 scopes left %d scope windows in the transport (LearnedLimits lists %d, %d events), over 2*throttle.MaxLearned = %d; "+
				"throttle.MaxLearned: \"Bounds on learned limits, so a hostile service cannot grow them\"; RELIABILITY.md: \"Bad input never panics, hangs or grows memory\"",
				n, len(tr.LearnedLimits()), len(evs()), 2*throttle.MaxLearned)
		}
	})
}

func attack36Itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for i > 0 {
		b = append([]byte{byte('0' + i%10)}, b...)
		i /= 10
	}
	return string(b)
}

// held: a store answering the same window twice (6 then 7), a limit of 0,
// one of 1,000,000, and an unknown Period: limits are clamped to at least 1
// (a tenth of the table's) and at most MaxLearnedLimit; one window, one
// limit in force.
func TestAttack36StoreDuplicateAndOutOfBoundLimits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &attack36HostileLimitStore{MemoryBudgetStore: &throttle.MemoryBudgetStore{}}
		store.out = func(now time.Time) []throttle.Learned {
			u := now.Add(time.Minute)
			return []throttle.Learned{
				{Scope: "profile", Period: throttle.Burst, Limit: 6, Until: u},
				{Scope: "profile", Period: throttle.Burst, Limit: 7, Until: u},
				{Scope: "profile", Period: throttle.Sustain, Limit: 0, Until: u},
				{Scope: "host:a.example", Period: throttle.Burst, Limit: 1000000, Until: u},
			}
		}
		tr, _ := attack36HostileTransport(store)
		attack31ProfileAs(tr, attack35A)
		n := 0
		for _, l := range tr.LearnedLimits() {
			if l.Scope == "profile" && l.Period == throttle.Burst {
				n++
			}
			if l.Learned < 1 || l.Learned > DefaultMaxLearnedLimit {
				t.Errorf("a store's limit out of bounds kept: %+v", l)
			}
			if l.Scope == "profile" && l.Period == throttle.Sustain && l.Learned < 3 {
				t.Errorf("the store's sustain 0 kept below a tenth of the table's 30: %+v", l)
			}
		}
		if n != 1 {
			t.Errorf("profile's burst listed %d times", n)
		}
	})
}
