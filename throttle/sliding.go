package throttle

import (
	"math"
	"slices"
	"time"
)

// slidingLog is the client-side budget of one key: the times of its most recent
// admissions and a deadline set by the server's Retry-After. It admits a
// request at t only if fewer than Burst admissions lie in (t-BurstPeriod-margin, t]
// and fewer than Sustain in (t-SustainPeriod-margin, t], so no span of a period
// ever holds more than its limit, whatever alignment the server's fixed windows
// use. The margin absorbs the difference between when a client sends and
// when the server counts.
//
// The zero value admits everything until a limit is given. slidingLog is not safe
// for concurrent use; MemoryBudgetStore guards one per key; it must not be copied after
// its first admission (its first ring lives inside it). It keeps up to
// max(Burst, Sustain) timestamps of the largest limit it has been given (at
// most MaxLimit; twice that while calls are booked ahead: see fit), growing as it needs: a key admitted once holds its one
// timestamp inline. It never shrinks to a smaller limit: callers sharing a
// key under different limits (transports of other LimitShares on one
// store) each need the admissions their own limit counts.
type slidingLog struct {
	times   []int64 // ring of admission times (instants), oldest at head
	head    int32
	n       int32
	largest int32    // capFor of the largest limit given while the key lives: what the ring may grow to
	blocked int64    // the instant before which nothing is admitted (0: none, before every instant)
	first   [1]int64 // the ring of a key admitted once, without an allocation
}

// Admission is the answer to "when may a call go?".
type Admission struct {
	// Allowed reports whether the call was admitted and counted. When Wait
	// is not zero, the call is booked for now+Wait and must not be sent
	// before then.
	Allowed bool
	// Wait is, when allowed, the time until the booked slot; when not
	// allowed, the time until a call would be admitted (assuming no other
	// admissions meanwhile).
	Wait time.Duration
	// Blocked reports that the wait comes from a server Retry-After, not from
	// the local count.
	Blocked bool
	// Slot identifies the booked slot, when allowed, for a store's Release:
	// a call that was booked but is then not sent (cancelled while it waits,
	// refused by another check) gives its slot back, once. Its meaning is
	// the store's own (MemoryBudgetStore's: the instant counted, in
	// nanoseconds from an origin of its own, so two calls booked at one
	// instant hold equal slots); zero when nothing was booked, and a
	// booked slot is never zero.
	Slot int64
}

// Admit counts a call at now if the budget allows it.
func (s *slidingLog) Admit(now time.Time, l Limit, margin time.Duration) Admission {
	return s.Reserve(now, l, margin, 0)
}

// Reserve books the earliest slot for a call, if it comes within maxWait of
// now: the call must be sent no earlier than now+Wait, and is counted then
// or at the newest admission when that is later (see BudgetStore.Reserve).
// Callers that book in turn are served in turn, instead of all waking at
// the same instant to race for one slot.
func (s *slidingLog) Reserve(now time.Time, l Limit, margin, maxWait time.Duration) Admission {
	l = l.Held()
	t := instant(now)
	at, blocked := s.earliest(t, l, marginOf(margin))
	wait := until(at, t)
	if wait > max(maxWait, 0) || at > maxInstant { // nothing is booked past the span a store counts
		return Admission{Wait: wait, Blocked: blocked}
	}
	slot := s.push(at, l, at > t)
	return Admission{Allowed: true, Wait: wait, Slot: slot}
}

// Release gives back the slot a Reserve booked (Admission.Slot) for a call
// that was not sent, so it no longer counts. It reports whether the slot was
// still held; a slot already pushed out of the ring, or never booked, changes
// nothing. Releasing can only make the budget looser for calls booked
// later, never stricter, so calls already booked stay within the limits.
func (s *slidingLog) Release(slot int64) bool {
	all := s.ordered()
	i := slices.Index(all, slot)
	if i < 0 {
		return false
	}
	all = slices.Delete(all, i, i+1)
	clear(s.times)
	copy(s.times, all)
	s.head, s.n = 0, int32(len(all))
	return true
}

// Block refuses every call until until; a later deadline wins over an earlier
// one. This is how a server Retry-After, which is authoritative, is absorbed.
func (s *slidingLog) Block(until time.Time) {
	s.blocked = max(s.blocked, instant(until))
}

// An instant is a time as the memory stores count it: its UnixNano plus
// instantOrigin, for a time from minShift to maxShift of the Unix epoch,
// where a store's shift (table.shift) puts every time it is given. So an
// instant is exact to the nanosecond, always positive (0 is before all of
// them: a key's first block, none), and an instant plus any period or
// margin (held to maxMargin) stays an int64; instantOrigin is a whole
// number of sustain periods, so ClockAligned windows still start at
// multiples of their period since the Unix epoch.
const (
	instantOrigin = int64(SustainPeriod) * (1 << 61 / int64(SustainPeriod)) // about 2^61
	maxMargin     = time.Duration(1 << 59)
	minShift      = 4*SustainPeriod - time.Duration(instantOrigin)                                           // about 73 years back; the first instant is past every period
	maxShift      = time.Duration(math.MaxInt64 - instantOrigin - int64(maxMargin) - 4*int64(SustainPeriod)) // about 200 years ahead
	maxInstant    = instantOrigin + int64(maxShift)                                                          // the last: no admission is recorded past it
)

func instant(t time.Time) int64 { return t.UnixNano() + instantOrigin }

// instantTime is the time of an instant.
func instantTime(at int64) time.Time { return time.Unix(0, at-instantOrigin) }

// marginOf is margin as instants count it: at least 0, at most maxMargin.
func marginOf(margin time.Duration) int64 { return int64(min(max(margin, 0), maxMargin)) }

// until returns the time from t to at (at >= t).
func until(at, t int64) time.Duration { return time.Duration(at - t) }

// earliest returns the first instant at or after t at which a call is
// admissible, and whether the server block is what decides it.
func (s *slidingLog) earliest(t int64, l Limit, margin int64) (int64, bool) {
	at := t
	if l.Burst > 0 && int(s.n) >= l.Burst {
		at = max(at, s.recent(l.Burst)+int64(BurstPeriod)+margin)
	}
	if l.Sustain > 0 && int(s.n) >= l.Sustain {
		at = max(at, s.recent(l.Sustain)+int64(SustainPeriod)+margin)
	}
	if s.blocked > at {
		return s.blocked, true
	}
	return at, false
}

// recent returns the k-th most recent admission (k >= 1, k <= n).
func (s *slidingLog) recent(k int) int64 {
	c := int32(len(s.times))
	return s.times[(s.head+s.n-int32(k))%c]
}

// push records an admission at t, keeping times ordered: t earlier than the
// newest (callers racing with slightly different clocks) is recorded as the
// newest, which can only make the budget stricter. It returns the time
// recorded. ahead says the admission is booked ahead (see fit).
func (s *slidingLog) push(t int64, l Limit, ahead bool) int64 {
	s.fit(l, ahead)
	c := int32(len(s.times))
	if s.n > 0 {
		t = max(t, s.recent(1))
	}
	if s.n < c {
		s.times[(s.head+s.n)%c] = t
		s.n++
		return t
	}
	s.times[s.head] = t
	s.head = (s.head + 1) % c
	return t
}

// hold notes l as given to the key and returns the ring size the largest
// limit given needs.
func (s *slidingLog) hold(l Limit) int {
	s.largest = max(s.largest, int32(capFor(l)))
	return int(s.largest)
}

// capFor returns the ring size l needs: its larger limit, held to MaxLimit
// (which Parse refuses to exceed).
func capFor(l Limit) int { return min(max(l.Burst, l.Sustain, 1), MaxLimit) }

// fit makes room in the ring for one more admission under l. The ring grows
// by doubling up to the largest limit the key has been given (hold), so a
// key that calls rarely stays small; it never shrinks (see slidingLog): a
// full ring as large as the largest limit drops its oldest admission,
// which no decision under any of its limits reads.
//
// A booking ahead into a full ring grows it further, up to twice the
// largest limit: the booking stands in for the oldest admission it would
// push out only while it is held, and a Release of it (the call not sent)
// would leave the span short of that admission, which decisions before
// the booking's time still count.
func (s *slidingLog) fit(l Limit, ahead bool) {
	want, size := s.hold(l), len(s.times)
	switch {
	case size == 0:
		s.times = s.first[:] // one admission: no allocation yet
	case size < want && int(s.n) == size: // grow a full ring by doubling
		s.resize(min(want, max(4, 2*size)))
	case ahead && size < 2*want && int(s.n) == size:
		s.resize(min(2*want, max(4, 2*size)))
	}
}

// resize reallocates the ring to size, keeping the newest admissions.
func (s *slidingLog) resize(size int) {
	all := s.ordered()
	all = all[max(0, len(all)-size):]
	if size == 1 {
		s.times = s.first[:]
	} else {
		s.times = make([]int64, size)
	}
	copy(s.times, all)
	s.head, s.n = 0, int32(len(all))
}

func (s *slidingLog) ordered() []int64 {
	out := make([]int64, 0, s.n)
	for k := int(s.n); k >= 1; k-- {
		out = append(out, s.recent(k))
	}
	return out
}

// countIn returns the admissions in (lo, hi].
func (s *slidingLog) countIn(lo, hi int64) int {
	c := 0
	for k := 1; k <= int(s.n); k++ {
		v := s.recent(k)
		if v <= lo {
			break
		}
		if v <= hi {
			c++
		}
	}
	return c
}

// Sync brings the budget up to what the server reports for one of its
// windows: used requests in a window of period p that ends in reset. When the
// server has counted more than the budget holds for that window (within a
// second, as reset is rounded up), the missing requests are recorded at the
// window's start, so they leave the budget when the server's window ends. A server that reports fewer changes nothing: the
// budget only ever becomes stricter.
func (s *slidingLog) Sync(now time.Time, l Limit, p Period, used int, reset time.Duration) {
	d := p.Duration()
	if d == 0 || reset <= 0 || reset > d {
		return
	}
	t := instant(now)
	start := t + int64(reset) - int64(d)
	// Servers round reset up to whole seconds, so their window may have
	// opened up to a second before start: admissions since then, and sent
	// by now (not one booked ahead), are already in used.
	missing := used - s.countIn(start-int64(time.Second)-1, t)
	if missing <= 0 {
		return
	}
	s.resize(max(s.hold(l), len(s.times))) // the largest limit's, or larger for bookings ahead: see fit
	all := s.ordered()
	i, _ := slices.BinarySearch(all, start)
	all = slices.Insert(all, i, slices.Repeat([]int64{start}, min(missing, len(s.times)))...)
	all = all[max(0, len(all)-len(s.times)):]
	copy(s.times, all)
	s.head, s.n = 0, int32(len(all))
}

// Snapshot describes the budget at now for l.
type Snapshot struct {
	// Counts hold, for each window, the admissions in the sliding span
	// ending at now, the limit, and the time until the oldest of them
	// leaves the span.
	Counts
	// BlockedUntil is the server's Retry-After deadline, or the zero Time.
	BlockedUntil time.Time
	// Wait is the time until the next call may go; 0 means now.
	Wait time.Duration
}

// Snapshot reports the budget at now.
func (s *slidingLog) Snapshot(now time.Time, l Limit, margin time.Duration) Snapshot {
	l = l.Held()
	t := instant(now)
	m := marginOf(margin)
	at, _ := s.earliest(t, l, m)
	snap := Snapshot{
		Counts: Counts{Burst: s.window(t, l.Burst, int64(BurstPeriod)+m), Sustain: s.window(t, l.Sustain, int64(SustainPeriod)+m)},
		Wait:   until(at, t),
	}
	if s.blocked > t {
		snap.BlockedUntil = instantTime(s.blocked)
	}
	return snap
}

func (s *slidingLog) window(t int64, limit int, width int64) WindowState {
	c := s.countIn(t-width, math.MaxInt64) // a booking ahead counts too
	w := WindowState{Count: c, Limit: limit}
	if c > 0 {
		w.Reset = until(s.recent(c)+width, t)
	}
	return w
}

// idle reports whether nothing recorded can affect a decision at t or later,
// for any margin up to a sustain period.
func (s *slidingLog) idle(t int64) bool {
	return s.blocked <= t && (s.n == 0 || s.recent(1)+2*int64(SustainPeriod) <= t)
}

func (s *slidingLog) last() int64 {
	if s.n == 0 {
		return s.blocked
	}
	return max(s.recent(1), s.blocked)
}
