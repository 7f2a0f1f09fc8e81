package mock

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"time"

	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/internal/xblid"
	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/throttle"
)

// Config configures a Handler; New checks it. The zero value is the
// default mock: the 2020 limits, a private in-memory store, time.Now, no
// faults.
type Config struct {
	// Limits are the hosts served and their limits; nil means
	// limits.Default(), the 2020 table.
	Limits *limits.Limits
	// Store keeps the FGRL counts; several mocks may share one (a Redis
	// store, for a mock with several replicas). Nil means a private
	// in-memory throttle.MemoryServerStore honouring Align and MaxKeys. A store given
	// here keeps its own alignment (redisstore.Store.Align), so New refuses
	// Align with it rather than ignore it.
	Store throttle.ServerStore
	// Align chooses where the built-in store's windows start (default: at
	// the first request).
	Align throttle.Align
	// MaxKeys caps the FGRL keys held in memory (0: throttle.DefaultMaxKeys)
	// and, proportionally, the per-user service state.
	MaxKeys int
	// Now is the mock's clock, for replaying traffic in virtual time; nil
	// means time.Now. Inside a testing/synctest bubble time.Now is already
	// virtual and no clock is needed.
	Now func() time.Time
	// LegacyTitles are exempt from FGRL, as titles that shipped before May
	// 2016 are: title IDs in decimal, as tokens carry them (New refuses
	// anything else).
	LegacyTitles []string
	// Fallback serves hosts that have no rule with the limits data's
	// fallback rule (10 / 30, what the trace analyzer assumes), answering
	// 404 to every path after counting. Without it such hosts get 404
	// uncounted.
	Fallback bool
	// Publishers says which publisher owns a title (title ID to publisher
	// ID), for the Store services' per-publisher sustain limit. A title
	// with no publisher is its own publisher.
	Publishers map[string]string
	// SCIDs gives titles a service configuration ID (title ID to SCID,
	// kept lower case, as the service keeps SCIDs) instead of the one SCID
	// derives.
	SCIDs map[string]string
	// Faults are injected from the start; Handler.SetFaults changes them
	// while the mock serves.
	Faults Faults
	// MaxBody bounds request bodies (0: 1 MiB); larger ones get 413.
	MaxBody int64
	// MaxStateBytes caps the bytes of service state the mock keeps
	// (presence, achievement progress, session documents; 0:
	// DefaultMaxStateBytes). Past it, older records of the same kind are
	// dropped.
	MaxStateBytes int64
	// FailOpen serves requests when the store fails (a Redis outage),
	// instead of answering 503.
	FailOpen bool
	// Logger logs each request at level Info once it is answered: its
	// method, host and path, the status, and for a counted request its key
	// (service scope, userhash and title; never the token) with the burst
	// and sustain counts and limits after it. An aborted answer (a reset or
	// a truncation fault) is logged with aborted=true. Nil logs nothing and
	// costs nothing.
	Logger *slog.Logger
	// Account signs in at the mock's sign-in endpoints (nil:
	// DefaultAccount); Handler.SetAccount changes it later.
	Account *Account
	// SignInTitle is the title the XSTS tokens the mock mints are for
	// ("1234567890" when empty).
	SignInTitle string
	// World is the people the services answer about (the zero World: the
	// default, derived one); New refuses one that cannot be, as SetWorld
	// does.
	World World
	// Script is answered before the mock's own behaviour (Handler.SetScript
	// changes it later); New refuses one that cannot be.
	Script Script
}

// config is a checked Config with its defaults filled in.
type config struct {
	limits        *limits.Limits
	store         throttle.ServerStore
	maxKeys       int
	now           func() time.Time
	legacy        map[string]bool
	fallback      bool
	publishers    map[string]string
	scids         map[string]string
	faults        Faults
	maxBody       int64
	maxStateBytes int64
	failOpen      bool
	logger        *slog.Logger
	signInTitle   string
	account       *Account
	world         World
	script        Script
}

// check returns c with its defaults, or what is wrong with it.
func (c Config) check() (config, error) {
	switch {
	case c.Store != nil && c.Align != throttle.FirstRequest:
		return config{}, errors.New("mock: Align configures the built-in store; set the alignment on the Store given (such as redisstore.Store.Align)")
	case c.MaxKeys < 0 || c.MaxBody < 0 || c.MaxStateBytes < 0:
		return config{}, errors.New("mock: MaxKeys, MaxBody and MaxStateBytes must not be negative")
	}
	if err := c.Faults.Check(); err != nil {
		return config{}, err
	}
	if err := c.World.check(); err != nil {
		return config{}, err
	}
	for i, t := range c.LegacyTitles {
		if err := xblid.CheckTitle(t); err != nil {
			return config{}, fmt.Errorf("mock: LegacyTitles[%d]: %w", i, err)
		}
	}
	r := config{limits: c.Limits, store: c.Store, maxKeys: c.MaxKeys, now: c.Now, legacy: map[string]bool{},
		fallback: c.Fallback, publishers: maps.Clone(c.Publishers), scids: map[string]string{}, faults: c.Faults,
		maxBody: cmp.Or(c.MaxBody, 1<<20), maxStateBytes: cmp.Or(c.MaxStateBytes, DefaultMaxStateBytes),
		failOpen: c.FailOpen, logger: c.Logger, signInTitle: c.SignInTitle, account: c.Account, world: c.World, script: c.Script}
	if r.limits == nil {
		r.limits = limits.Default()
	}
	if r.store == nil {
		r.store = &throttle.MemoryServerStore{Align: c.Align, MaxKeys: c.MaxKeys}
	}
	if r.now == nil {
		r.now = time.Now
	}
	for _, t := range c.LegacyTitles {
		r.legacy[t] = true
	}
	for t, scid := range c.SCIDs {
		r.scids[t] = strings.ToLower(scid)
	}
	return r, nil
}

// Faults makes the mock misbehave the way real services sometimes do, to test
// clients. Every request is counted by FGRL before a fault applies. The zero
// value injects nothing.
type Faults struct {
	// Latency is added before every answer (it ends early if the request's
	// context is done).
	Latency throttle.Duration `json:"latency"`
	// ErrorRate is the fraction of admitted requests answered 500 or 503
	// (alternately) instead of being served.
	ErrorRate float64 `json:"errorRate"`
	// ResetRate is the fraction of admitted requests whose connection is
	// reset without an answer.
	ResetRate float64 `json:"resetRate"`
	// TruncateRate is the fraction of admitted requests whose answer is cut
	// off halfway through its body (the connection then closes).
	TruncateRate float64 `json:"truncateRate"`
	// RetryAfter changes the Retry-After header of 429 and 503 answers.
	RetryAfter RetryAfterMode `json:"retryAfter"`
	// Seed seeds the fault dice, so a run can be repeated.
	Seed uint64 `json:"seed"`
	// Services are faults of one service each, as an outage of that
	// service alone: "presence answering 429 for two minutes".
	Services []ServiceFault `json:"services,omitempty"`
}

// ServiceFault makes one service misbehave: for the requests to it (or to
// one of its rules' scopes), a share of them or all, for a span of time or
// until changed, it answers Status (429 with the documented body, 500 or
// 503, with RetryAfter), after Latency, or resets the connection. The
// request is counted by FGRL first, as every request is.
type ServiceFault struct {
	// Service is a rule's service ("presence") or scope
	// ("presence/write").
	Service string `json:"service"`
	// Status is 429, 500 or 503; 0 answers as the mock would (after
	// Latency, unless Reset).
	Status int `json:"status,omitempty"`
	// RetryAfter is the wait a 429 or 503 asks for (0: 30 s for 429, none
	// for 503).
	RetryAfter throttle.Duration `json:"retryAfter,omitempty"`
	// Latency delays the answer.
	Latency throttle.Duration `json:"latency,omitempty"`
	// Reset closes the connection without an answer.
	Reset bool `json:"reset,omitempty"`
	// Rate is the share of the service's requests that get the fault; 0
	// means all of them.
	Rate float64 `json:"rate,omitempty"`
	// For is how long the fault lasts from when it is set (0: until
	// changed); Until is when it ends, which setting the faults works out
	// from For.
	For   throttle.Duration `json:"for,omitempty"`
	Until time.Time         `json:"until,omitzero"`
}

// Check reports faults that cannot be: rates outside [0, 1] (NaN and the
// infinities included) or adding up past 1, a negative latency, an unknown
// Retry-After mode.
func (f Faults) Check() error {
	switch {
	case !fraction(f.ErrorRate) || !fraction(f.ResetRate) || !fraction(f.TruncateRate) || !fraction(f.ErrorRate+f.ResetRate+f.TruncateRate):
		return fmt.Errorf("mock: fault rates must be fractions from 0 to 1 adding up to at most 1 (error %v, reset %v, truncate %v)",
			f.ErrorRate, f.ResetRate, f.TruncateRate)
	case f.Latency < 0:
		return errors.New("mock: fault latency must not be negative")
	case int(f.RetryAfter) >= len(retryAfterNames):
		return errors.New("mock: unknown Retry-After mode")
	}
	for i, sf := range f.Services {
		if err := sf.check(); err != nil {
			return fmt.Errorf("mock: services[%d]: %w", i, err)
		}
	}
	return nil
}

// fraction reports whether x is a share from 0 to 1; NaN and the
// infinities are not.
func fraction(x float64) bool { return x >= 0 && x <= 1 }

func (sf *ServiceFault) check() error {
	switch {
	case sf.Service == "" || len(sf.Service) > 100:
		return errors.New("name the service (such as presence) or a rule's scope (presence/write)")
	case sf.Status != 0 && sf.Status != 429 && sf.Status != 500 && sf.Status != 503:
		return errors.New("status is 429, 500 or 503")
	case sf.Status == 0 && sf.Latency == 0 && !sf.Reset:
		return errors.New("a fault needs a status, a latency or a reset")
	case !fraction(sf.Rate):
		return errors.New("rate is a share, 0 to 1")
	case sf.RetryAfter < 0 || sf.Latency < 0 || sf.For < 0 || time.Duration(sf.Latency) > maxScriptLatency:
		return errors.New("retryAfter, latency and for are not negative, and latency is at most 10m")
	}
	return nil
}

// active reports whether the fault applies to a request for rule at now.
func (sf *ServiceFault) active(rule *limits.Rule, now time.Time) bool {
	return (sf.Service == rule.Service || sf.Service == rule.Scope()) && (sf.Until.IsZero() || now.Before(sf.Until))
}

// RetryAfterMode is how the mock writes Retry-After.
type RetryAfterMode uint8

// The Retry-After modes.
const (
	RetryAfterSeconds  RetryAfterMode = iota // whole seconds, rounded up (the real services)
	RetryAfterMissing                        // no header
	RetryAfterHTTPDate                       // an HTTP-date
	RetryAfterHuge                           // a very large number of seconds
	RetryAfterNegative                       // a negative number
	RetryAfterGarbage                        // not a number
)

var retryAfterNames = [...]string{"seconds", "missing", "http-date", "huge", "negative", "garbage"}

// RetryAfterModes returns the modes' names, as String writes them.
func RetryAfterModes() []string { return append([]string(nil), retryAfterNames[:]...) }

// String returns the mode's name: "seconds", "http-date", ...
func (m RetryAfterMode) String() string {
	if int(m) < len(retryAfterNames) {
		return retryAfterNames[m]
	}
	return "unknown"
}

// ParseRetryAfterMode reads a mode's name.
func ParseRetryAfterMode(s string) (RetryAfterMode, error) {
	for i, n := range retryAfterNames {
		if n == s {
			return RetryAfterMode(i), nil
		}
	}
	return 0, fmt.Errorf("mock: unknown Retry-After mode %q (want %s)", safetext.Clip(s, 40), strings.Join(retryAfterNames[:], ", "))
}

// MarshalText writes the mode's name.
func (m RetryAfterMode) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText reads a mode's name.
func (m *RetryAfterMode) UnmarshalText(b []byte) error {
	v, err := ParseRetryAfterMode(string(b))
	*m = v
	return err
}
