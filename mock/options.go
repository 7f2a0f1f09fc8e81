package mock

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/throttle"
)

// An Option configures a Handler.
type Option func(*config)

type config struct {
	limits        *limits.Limits
	store         throttle.ServerStore
	align         throttle.Align
	alignSet      bool
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
}

// WithLimits serves the hosts of l with its limits. The default is
// limits.Default(), the 2020 table.
func WithLimits(l *limits.Limits) Option { return func(c *config) { c.limits = l } }

// WithStore keeps the FGRL counts in s, which several mocks may share (a
// Redis store, for a mock with several replicas). The default is a private
// in-memory throttle.Server honouring WithAlign and WithMaxKeys. A store
// given here keeps its own alignment (redisstore.Store.Align), so NewHandler
// panics when WithAlign is given too, rather than ignore it.
func WithStore(s throttle.ServerStore) Option { return func(c *config) { c.store = s } }

// WithAlign chooses where the built-in store's windows start (default: at
// the first request). It cannot be combined with WithStore.
func WithAlign(a throttle.Align) Option {
	return func(c *config) { c.align, c.alignSet = a, true }
}

// WithMaxKeys caps the FGRL keys held in memory (default
// throttle.DefaultMaxKeys) and, proportionally, the per-user service state.
func WithMaxKeys(n int) Option { return func(c *config) { c.maxKeys = n } }

// WithClock makes the mock read the time from now instead of time.Now, for
// replaying traffic in virtual time. Inside a testing/synctest bubble
// time.Now is already virtual and no clock is needed.
func WithClock(now func() time.Time) Option { return func(c *config) { c.now = now } }

// WithLegacyTitles exempts these titles from FGRL, as titles that shipped
// before May 2016 are.
func WithLegacyTitles(titleIDs ...string) Option {
	return func(c *config) {
		for _, t := range titleIDs {
			c.legacy[t] = true
		}
	}
}

// WithFallback serves hosts that have no rule with the limits data's
// fallback rule (10 / 30, what the trace analyzer assumes), answering 404 to
// every path after counting. Without it such hosts get 404 uncounted.
func WithFallback() Option { return func(c *config) { c.fallback = true } }

// WithPublisher says which publisher owns a title, for the Store services'
// per-publisher sustain limit. A title with no publisher is its own
// publisher.
func WithPublisher(titleID, publisherID string) Option {
	return func(c *config) { c.publishers[titleID] = publisherID }
}

// WithSCID gives a title the service configuration ID scid (stored lower
// case, as the service keeps SCIDs), instead of the one SCID derives.
func WithSCID(titleID, scid string) Option {
	return func(c *config) { c.scids[titleID] = strings.ToLower(scid) }
}

// WithFaults injects faults; see Faults.
func WithFaults(f Faults) Option { return func(c *config) { c.faults = f } }

// WithMaxBody bounds request bodies (default 1 MiB); larger ones get 413.
func WithMaxBody(n int64) Option { return func(c *config) { c.maxBody = n } }

// WithMaxStateBytes caps the bytes of service state the mock keeps
// (presence, achievement progress, session documents; default
// DefaultMaxStateBytes). Past it, older records of the same kind are dropped.
func WithMaxStateBytes(n int64) Option { return func(c *config) { c.maxStateBytes = n } }

// WithFailOpen serves requests when the store fails (a Redis outage),
// instead of answering 503.
func WithFailOpen() Option { return func(c *config) { c.failOpen = true } }

// Faults makes the mock misbehave the way real services sometimes do, to test
// clients. Every request is counted by FGRL before a fault applies. The zero
// value injects nothing.
type Faults struct {
	// Latency is added before every answer (it ends early if the request's
	// context is done).
	Latency time.Duration `json:"latencyNs"`
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
}

// Check reports faults that cannot be: rates outside [0, 1] or adding up
// past 1, a negative latency, an unknown Retry-After mode.
func (f Faults) Check() error {
	switch {
	case f.ErrorRate < 0 || f.ResetRate < 0 || f.TruncateRate < 0 || f.ErrorRate+f.ResetRate+f.TruncateRate > 1:
		return errors.New("mock: fault rates must be fractions adding up to at most 1")
	case f.Latency < 0:
		return errors.New("mock: fault latency must not be negative")
	case int(f.RetryAfter) >= len(retryAfterNames):
		return errors.New("mock: unknown Retry-After mode")
	}
	return nil
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

// WithLogger logs each request to l at level Info once it is answered: its
// method, host and path, the status, and for a counted request its key
// (service scope, userhash and title; never the token) with the burst and
// sustain counts and limits after it. An aborted answer (a reset or a
// truncation fault) is logged with aborted=true. Without it
// the mock logs nothing and pays nothing for logging.
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// WithAccount sets the account that signs in at the mock's sign-in
// endpoints (DefaultAccount otherwise); Handler.SetAccount changes it later.
func WithAccount(a Account) Option { return func(c *config) { c.account = &a } }

// WithSignInTitle sets the title the XSTS tokens the mock mints are for
// ("1234567890" otherwise).
func WithSignInTitle(titleID string) Option { return func(c *config) { c.signInTitle = titleID } }
