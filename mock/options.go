package mock

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"time"

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
	// Logger logs each request at level Info once it is answered, as its
	// journal records it (Call): its method, host and path, the status,
	// and for a counted request its key (service scope, userhash and
	// title; never the token) with the burst and sustain counts and limits
	// after it. An aborted answer is logged with aborted=true and the
	// status it went out with (a truncation fault's), 0 when none did (a
	// reset). Nil logs nothing and costs nothing.
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
	if err := checkFaultServices(r.limits, c.Faults.Services); err != nil {
		return config{}, err
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

// publisher returns the publisher of title (Config.Publishers), the title
// itself when it has none.
func (c *config) publisher(title string) string {
	if p, ok := c.publishers[title]; ok {
		return p
	}
	return title
}
