// Package fgrlotel makes OpenTelemetry metrics and span events of what a
// transport.Transport does: attempts, retries, waits, local refusals, 429s
// and budget store failures. It is its own package so that a program that
// does not use OpenTelemetry does not build it; the transport only exposes
// its Observe hook.
//
// Metrics (go.opentelemetry.io/otel/metric), each with the attributes
// fgrl.scope (the limits rule, such as "profile" or "presence/write") and
// fgrl.class ("read" or "write"):
//
//	fgrl.transport.attempts        counter, + fgrl.outcome: 1xx 2xx 3xx 4xx 429 5xx error,
//	                               or other (a status outside 100-599, which net/http takes)
//	fgrl.transport.retries         counter, + fgrl.reason: "status 503", "network error", "not sent: attempt timed out"
//	fgrl.transport.wait.duration   histogram (s), + fgrl.reason: budget, background, retry-after
//	fgrl.transport.local_refusals  counter, + fgrl.reason: budget, retry-after
//	fgrl.transport.shadow_refusals counter
//	fgrl.transport.server_429s     counter
//	fgrl.transport.budget.errors   counter (fgrl.scope only): the shared store failed
//	fgrl.transport.budget.fallbacks counter (fgrl.scope only): a local budget decided
//	fgrl.transport.limits.learned  counter, + fgrl.period: burst, sustain: a 429 reported
//	                               another limit than the data's (drift; transport.LearnedLimits);
//	                               a learned limit's end is none (as in transport.Stats)
//
// Never a user, token, userhash or XUID: they are personal data, and one
// series per player would grow without bound.
//
// Traces: each event is a span event ("fgrl.attempt", "fgrl.wait",
// "fgrl.local_refusal", "fgrl.server_429", ...) on the span in the request's
// context, with its reason, status, wait and, for a 429, the body's fields
// (fgrl.limit.current_requests, max_requests, period_s, type). With
// otelhttp.NewTransport(&transport.Transport{...}) that is the call's client
// span; with &transport.Transport{Base: otelhttp.NewTransport(...)} otelhttp
// makes a span per attempt and the events go on the caller's span.
package fgrlotel

import (
	"context"
	"errors"
	"strings"
	"sync"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/xblgo/fgrl/transport"
)

// ScopeName is the instrumentation scope of the meter.
const ScopeName = "github.com/xblgo/fgrl/fgrlotel"

// Option configures Instrument and Observer.
type Option func(*config)

type config struct{ mp metric.MeterProvider }

// WithMeterProvider uses mp instead of the global meter provider.
func WithMeterProvider(mp metric.MeterProvider) Option { return func(c *config) { c.mp = mp } }

// Instrument sets t.Observe to record metrics and span events, after any
// Observe already set.
func Instrument(t *transport.Transport, opts ...Option) error {
	obs, err := Observer(opts...)
	if err != nil {
		return err
	}
	if prev := t.Observe; prev != nil {
		t.Observe = func(ctx context.Context, e transport.Event) { prev(ctx, e); obs(ctx, e) }
		return nil
	}
	t.Observe = obs
	return nil
}

// Observer returns a transport.Transport Observe hook that records metrics
// and span events.
func Observer(opts ...Option) (func(context.Context, transport.Event), error) {
	c := config{}
	for _, o := range opts {
		o(&c)
	}
	if c.mp == nil {
		c.mp = otel.GetMeterProvider()
	}
	r, err := newRecorder(c.mp.Meter(ScopeName))
	if err != nil {
		return nil, err
	}
	return r.observe, nil
}

type recorder struct {
	attempts, retries, refusals, shadow, server429s, storeErrors, fallbacks, learned metric.Int64Counter
	waits                                                                            metric.Float64Histogram
	sets                                                                             sync.Map // setKey → *options
}

// options are one series' attributes, as the slices Add and Record take
// (cached, so that a measurement allocates nothing).
type options struct {
	add []metric.AddOption
	rec []metric.RecordOption
}

type setKey struct {
	scope, class, extra string
	kind                transport.EventKind
}

func newRecorder(m metric.Meter) (*recorder, error) {
	r := &recorder{}
	var errs []error
	counter := func(name, desc string) metric.Int64Counter {
		c, err := m.Int64Counter(name, metric.WithDescription(desc), metric.WithUnit("{call}"))
		errs = append(errs, err)
		return c
	}
	r.attempts = counter("fgrl.transport.attempts", "Requests sent to the service, retries included")
	r.retries = counter("fgrl.transport.retries", "Attempts after a call's first")
	r.refusals = counter("fgrl.transport.local_refusals", "Calls refused without sending")
	r.shadow = counter("fgrl.transport.shadow_refusals", "Calls the budget would have refused (shadow mode)")
	r.server429s = counter("fgrl.transport.server_429s", "429 answers from the service")
	r.storeErrors = counter("fgrl.transport.budget.errors", "Failures of the shared budget store")
	r.fallbacks = counter("fgrl.transport.budget.fallbacks", "Budget decisions made locally while the shared store is out of use")
	r.learned = counter("fgrl.transport.limits.learned", "Limits learned from 429 bodies that differ from the limits data (drift)")
	var err error
	r.waits, err = m.Float64Histogram("fgrl.transport.wait.duration", metric.WithUnit("s"),
		metric.WithDescription("Waits before an attempt (the budget, a cached Retry-After)"),
		metric.WithExplicitBucketBoundaries(0.01, 0.1, 0.5, 1, 2, 5, 10, 15, 20, 30, 60))
	errs = append(errs, err)
	return r, errors.Join(errs...)
}

// attrs returns the cached attribute options of an event's series.
func (r *recorder) attrs(e *transport.Event, extraKey string, extra string) *options {
	k := setKey{e.Scope, e.Class, extra, e.Kind}
	if v, ok := r.sets.Load(k); ok {
		return v.(*options)
	}
	kv := []attribute.KeyValue{attribute.String("fgrl.scope", e.Scope)}
	if e.Class != "" {
		kv = append(kv, attribute.String("fgrl.class", e.Class))
	}
	if extraKey != "" {
		kv = append(kv, attribute.String(extraKey, extra))
	}
	opt := metric.WithAttributeSet(attribute.NewSet(kv...))
	v, _ := r.sets.LoadOrStore(k, &options{add: []metric.AddOption{opt}, rec: []metric.RecordOption{opt}})
	return v.(*options)
}

// scopeAttrs returns the options of a store's series: the scope alone,
// whether the store failed for a call (its class known) or apart from one.
func (r *recorder) scopeAttrs(e transport.Event) *options {
	e.Class = ""
	return r.attrs(&e, "", "")
}

func (r *recorder) observe(ctx context.Context, e transport.Event) {
	switch e.Kind {
	case transport.EventAttempt:
		r.attempts.Add(ctx, 1, r.attrs(&e, "fgrl.outcome", outcome(e)).add...)
	case transport.EventRetry:
		r.retries.Add(ctx, 1, r.attrs(&e, "fgrl.reason", e.Reason).add...)
	case transport.EventWait:
		r.waits.Record(ctx, e.Wait.Seconds(), r.attrs(&e, "fgrl.reason", e.Reason).rec...)
	case transport.EventLocalRefusal:
		r.refusals.Add(ctx, 1, r.attrs(&e, "fgrl.reason", e.Reason).add...)
	case transport.EventShadowRefusal:
		r.shadow.Add(ctx, 1, r.attrs(&e, "", "").add...)
	case transport.EventServer429:
		r.server429s.Add(ctx, 1, r.attrs(&e, "", "").add...)
	case transport.EventBudgetError:
		r.storeErrors.Add(ctx, 1, r.scopeAttrs(e).add...)
	case transport.EventBudgetFallback:
		r.fallbacks.Add(ctx, 1, r.scopeAttrs(e).add...)
	case transport.EventLimitLearned:
		if e.Body == nil { // a learned limit's end (EventLimitLearned: "Body nil"): no limit learned
			break
		}
		period, _, _ := strings.Cut(e.Reason, " ") // "burst 8 in 15 s (was 10)"
		r.learned.Add(ctx, 1, r.attrs(&e, "fgrl.period", period).add...)
	}
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.AddEvent("fgrl."+e.Kind.String(), trace.WithAttributes(spanAttrs(&e)...))
	}
}

// outcome names an attempt's result by status class.
func outcome(e transport.Event) string {
	switch {
	case e.Err != nil || e.Status == 0:
		return "error"
	case e.Status == 429:
		return "429"
	case e.Status/100 >= 1 && e.Status/100 <= 5:
		return statusClasses[e.Status/100-1]
	}
	return "other"
}

var statusClasses = [...]string{"1xx", "2xx", "3xx", "4xx", "5xx"}

// spanAttrs are an event's span event attributes.
func spanAttrs(e *transport.Event) []attribute.KeyValue {
	kv := []attribute.KeyValue{attribute.String("fgrl.scope", e.Scope), attribute.String("fgrl.class", e.Class)}
	if e.Attempt > 0 {
		kv = append(kv, attribute.Int("fgrl.attempt", e.Attempt))
	}
	if e.Status != 0 {
		kv = append(kv, attribute.Int("http.response.status_code", e.Status))
	}
	if e.Wait > 0 {
		kv = append(kv, attribute.Float64("fgrl.wait_s", e.Wait.Seconds()))
	}
	if e.Duration > 0 {
		kv = append(kv, attribute.Float64("fgrl.duration_s", e.Duration.Seconds()))
	}
	if e.Reason != "" {
		kv = append(kv, attribute.String("fgrl.reason", e.Reason))
	}
	if e.Err != nil {
		kv = append(kv, attribute.String("error.type", errType(e.Err)))
	}
	if b := e.Body; b != nil {
		kv = append(kv, attribute.Int("fgrl.limit.current_requests", b.CurrentRequests),
			attribute.Int("fgrl.limit.max_requests", b.MaxRequests),
			attribute.Int("fgrl.limit.period_s", b.PeriodInSeconds),
			attribute.String("fgrl.limit.type", b.LimitType))
	}
	return kv
}

// errType names an error without its text (which can carry a URL).
func errType(err error) string {
	var te *transport.ThrottleError
	switch {
	case errors.As(err, &te):
		return "throttled"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	return "network"
}
