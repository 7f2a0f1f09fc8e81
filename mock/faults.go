package mock

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/throttle"
)

// Faults makes the mock misbehave the way real services sometimes do, to test
// clients. They apply to the requests FGRL counts (the package doc says
// which) and admits, once counted: a 429 of FGRL's, a request not counted
// and a scripted answer meet no fault. The zero value injects nothing.
type Faults struct {
	// Latency is added before every admitted request's answer (it ends
	// early if the request's context is done).
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
// 503, with RetryAfter), after Latency, or resets the connection. Like
// every fault, it applies to requests FGRL has counted and admitted.
type ServiceFault struct {
	// Service is a rule's service ("presence") or scope
	// ("presence/write"), or RTAService ("rta"), the Real-Time Activity
	// service: its Status 1001 (Throttled) or 1002 (ServiceUnavailable)
	// answers subscriptions (a share Rate of them; the first such fault
	// in force) with that code, 503 refuses every upgrade of its websocket
	// (Rate is not read), Reset drops every connection open when the
	// faults are set, and Latency delays its events, none past the
	// fault's end (an event is given its delay when published: one held
	// keeps it when the faults change). rta faults of each kind apply
	// together.
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
	// from For when it is not given. A given Until wins, so that faults
	// read back (Handler.Faults, the admin API's GET) and set again keep
	// their ends. Times are the handler's clock's (Config.Now): one that
	// goes back finds an ended fault in force again.
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
	case sf.Service == RTAService && sf.Status != 0 && sf.Status != rtaThrottled && sf.Status != rtaServiceUnavailable && sf.Status != 503:
		return errors.New("an rta fault's status is 1001 or 1002 (subscriptions refused) or 503 (connections refused)")
	case sf.Service != RTAService && sf.Status != 0 && sf.Status != 429 && sf.Status != 500 && sf.Status != 503:
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
	return (sf.Service == rule.Service || sf.Service == rule.Scope()) && sf.inForce(now)
}

// inForce reports whether the fault has not ended at now.
func (sf *ServiceFault) inForce(now time.Time) bool { return sf.Until.IsZero() || now.Before(sf.Until) }

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

// Faults returns the faults in force: a service fault whose For has
// passed is not among them.
func (h *Handler) Faults() Faults {
	f := h.faults.Load().f
	now := h.cfg.now()
	ended := func(sf ServiceFault) bool { return !sf.inForce(now) }
	if slices.ContainsFunc(f.Services, ended) {
		f.Services = slices.DeleteFunc(slices.Clone(f.Services), ended)
	}
	return f
}

// checkFaultServices refuses a service fault whose service no rule of l
// has: Config.Faults (New) and SetFaults alike.
func checkFaultServices(l *limits.Limits, ss []ServiceFault) error {
	for i, sf := range ss {
		if _, ok := l.ByScope(sf.Service); !ok && !hasService(l, sf.Service) && sf.Service != RTAService {
			return fmt.Errorf("mock: services[%d]: no rule has service or scope %s", i, safetext.Quote(sf.Service, 60))
		}
	}
	return nil
}

// setAt returns f as set at now: each service fault with a For and no
// Until ends For after now (Config.Faults at New, SetFaults later).
func (f Faults) setAt(now time.Time) Faults {
	f.Services = slices.Clone(f.Services)
	for i := range f.Services {
		if sf := &f.Services[i]; sf.For > 0 && sf.Until.IsZero() {
			sf.Until = now.Add(time.Duration(sf.For)).UTC()
		}
	}
	return f
}

// SetFaults changes the faults while the handler serves (the admin API's
// PUT /_fgrl/api/faults). A new Seed restarts the fault dice.
func (h *Handler) SetFaults(f Faults) error {
	if err := f.Check(); err != nil {
		return err
	}
	if err := checkFaultServices(h.cfg.limits, f.Services); err != nil {
		return err
	}
	now := h.cfg.now()
	f = f.setAt(now)
	h.switches.Add(1)
	if h.cfg.logger != nil {
		h.cfg.logger.Info("fgrl mock: faults set", "errorRate", f.ErrorRate, "resetRate", f.ResetRate, "truncateRate", f.TruncateRate,
			"latency", f.Latency, "services", describeServiceFaults(f.Services))
	}
	h.dice.mu.Lock()
	if old := h.faults.Load(); old.f.Seed != f.Seed {
		h.dice.restart(f.Seed)
	}
	h.faults.Store(newFaultState(f))
	h.dice.mu.Unlock()
	h.dropRTA(f.Services, now)
	return nil
}

// hasService reports whether a rule of l has service s.
func hasService(l *limits.Limits, s string) bool {
	for _, r := range l.Rules {
		if r.Service == s {
			return true
		}
	}
	return false
}

// describeServiceFaults writes service faults for the log, one phrase each.
func describeServiceFaults(sfs []ServiceFault) string {
	parts := make([]string, 0, len(sfs))
	for _, sf := range sfs {
		p := sf.Service + ":"
		if sf.Status != 0 {
			p += " " + strconv.Itoa(sf.Status)
		}
		if sf.Reset {
			p += " reset"
		}
		if sf.Latency > 0 {
			p += " +" + time.Duration(sf.Latency).String()
		}
		if sf.Rate > 0 {
			p += fmt.Sprintf(" %.0f%%", 100*sf.Rate)
		}
		if !sf.Until.IsZero() {
			p += " until " + sf.Until.Format(time.RFC3339)
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, "; ")
}

// faultState is the faults in force, with whether any is set: without one
// the pipeline skips its faults stage.
type faultState struct {
	f   Faults
	any bool
}

func newFaultState(f Faults) *faultState {
	return &faultState{f: f, any: f.Latency > 0 || f.ErrorRate > 0 || f.ResetRate > 0 || f.TruncateRate > 0 || len(f.Services) > 0}
}

// faultKind is a service fault as the counters name it (faultKinds), 0
// for none.
type faultKind uint8

var faultKinds = [...]string{"", "429", "500", "503", "reset", "latency"}

// kindOf is the kind of service fault sf.
func kindOf(sf *ServiceFault) faultKind {
	switch {
	case sf.Reset:
		return 4
	case sf.Status == 429:
		return 1
	case sf.Status == 500:
		return 2
	case sf.Status == 503:
		return 3
	}
	return 5
}
