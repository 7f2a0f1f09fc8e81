// Package throttle is the accounting core of Xbox Fine-Grained Rate Limiting
// (FGRL): the server's fixed-window rule, the client's conservative sliding
// budget, and the store interfaces that hold them. It is what a store
// implementer needs; the published limits live in package limits, the wire
// formats (429 body, Retry-After, RateLimit headers) in package ratelimit.
//
// Every service counts each user + title pair's requests over two windows at
// once: burst (BurstPeriod, 15 s) and sustain (SustainPeriod, 300 s). The
// server rule (ServerStore; MemoryServerStore in memory) reproduces what the
// service does; the client budget (BudgetStore; MemoryBudgetStore in memory)
// never admits more than a limit in any sliding span of a period, so a caller
// that respects it is safe whatever window alignment the service uses.
//
// Nothing in this package sleeps or reads the clock: every decision takes the
// current time as an argument, so it can be driven by real time, by a
// testing/synctest bubble, or by a simulation. The in-memory stores count
// time to the nanosecond from 73 years before their first decision to 200
// years after it, whatever year that is (a simulation may start at the
// zero Time); a time further away counts as that span's end.
package throttle

import (
	"strconv"
	"time"
)

// The two FGRL periods. Every service uses both.
const (
	BurstPeriod   = 15 * time.Second
	SustainPeriod = 300 * time.Second
)

// Key identifies one FGRL counter: a user and a title calling one service
// scope (a Rule's Scope, such as "profile" or "presence/write").
//
// User is the user as a request's token names it: the userhash (uhs) of
// "XBL3.0 x=<uhs>;<token>", the one identity a client can read. The service
// counts per XUID; a userhash stands for exactly one XUID, so counting by it
// gives the same counts. The transport, the mock and the simulator all key
// by it.
//
// For the per-publisher sustain of the Store services, Title holds the
// publisher ID and Scope the rule's PublisherScope.
type Key struct {
	User  string
	Title string
	Scope string
}

// MaxLimit bounds every limit: a client budget keeps one timestamp per
// request allowed, so a limit is also a memory size. The limits loader
// refuses larger ones; the budget stores read a larger one as MaxLimit.
const MaxLimit = 100_000

// Held returns l with each limit held to MaxLimit, as the budget stores
// read it.
func (l Limit) Held() Limit {
	return Limit{Burst: min(l.Burst, MaxLimit), Sustain: min(l.Sustain, MaxLimit)}
}

// Limit is the pair of limits applied to one key. A zero field means no limit
// of that kind (the Store services enforce sustain only on the per-publisher
// counter).
type Limit struct {
	Burst   int // requests per BurstPeriod
	Sustain int // requests per SustainPeriod
}

// Period names one of the two FGRL windows.
type Period uint8

// The periods a decision can report. None means no limit tripped.
const (
	None Period = iota
	Burst
	Sustain
)

// String returns "none", "burst" or "sustain".
func (p Period) String() string {
	switch p {
	case None:
		return "none"
	case Burst:
		return "burst"
	case Sustain:
		return "sustain"
	}
	return "Period(" + strconv.Itoa(int(p)) + ")"
}

// Duration returns the length of the period, or 0 for None.
func (p Period) Duration() time.Duration {
	switch p {
	case Burst:
		return BurstPeriod
	case Sustain:
		return SustainPeriod
	}
	return 0
}
