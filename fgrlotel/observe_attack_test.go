package fgrlotel_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/xblgo/fgrl/fgrlotel"
	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/throttle"
	"github.com/xblgo/fgrl/transport"
)

const (
	attackProfile = "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag"
	attackTitle   = "1234567890"
)

func attackGet(t testing.TB, c *http.Client, ctx context.Context, url, auth string) (int, error) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	req.Header.Set("Authorization", auth)
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// attackPoints collects every data point as name → attribute sets → value.
func attackPoints(t *testing.T, r *sdkmetric.ManualReader) map[string]map[attribute.Distinct]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[attribute.Distinct]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if out[m.Name] == nil {
				out[m.Name] = map[attribute.Distinct]int64{}
			}
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					out[m.Name][p.Attributes.Equivalent()] += p.Value
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					out[m.Name][p.Attributes.Equivalent()] += int64(p.Count)
				}
			}
		}
	}
	return out
}

func attackSum(m map[attribute.Distinct]int64) (n int64) {
	for _, v := range m {
		n += v
	}
	return n
}

// The package doc of fgrlotel: "fgrl.transport.limits.learned counter,
// + fgrl.period: burst, sustain: a 429 reported another limit than the
// data's (drift; transport.LearnedLimits)"; README: transportprom gives
// "the same counters". transport's Stats.LimitsLearned does not count a
// learned limit's end ("a learned limit's end is no limit learned",
// observe.go), and EventLimitLearned's doc says an end comes "with no 429
// to confirm it ... (Body nil, Reason "burst 6 expired for the scope ...")".
//
// TestAttackLearnedCounterCountsNoExpiry: a service applying a burst of 6
// where the table says 10 makes one user's 429 report it (one limit
// learned); after throttle.LearnedFor the limit ends. The OpenTelemetry
// counter must still read 1, as Stats.LimitsLearned does: the end is not
// a 429 that reported a limit.
func TestAttackLearnedCounterCountsNoExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		served, err := limits.Read(strings.NewReader(`{"rules": [{"service": "profile", "hosts": ["profile.xboxlive.com"], "burst": 6, "sustain": 30}]}`))
		if err != nil {
			t.Fatal(err)
		}
		h, _ := mock.New(mock.Config{Limits: served})
		reader := sdkmetric.NewManualReader()
		tr := &transport.Transport{Base: h, TitleID: attackTitle, RetryWindow: -1}
		if err := fgrlotel.Instrument(tr, fgrlotel.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))); err != nil {
			t.Fatal(err)
		}
		c := &http.Client{Transport: tr}
		auth := mock.Token("2533274791234567", attackTitle)
		for range 7 {
			attackGet(t, c, context.Background(), attackProfile, auth)
		}
		if n := tr.Stats().LimitsLearned; n != 1 {
			t.Fatalf("setup: Stats.LimitsLearned = %d, want 1", n)
		}
		time.Sleep(throttle.LearnedFor + time.Minute)
		attackGet(t, c, context.Background(), attackProfile, auth) // reads the learned limits: the one-user limit ends
		attackGet(t, c, context.Background(), attackProfile, auth)
		got := attackSum(attackPoints(t, reader)["fgrl.transport.limits.learned"])
		if want := tr.Stats().LimitsLearned; got != want {
			t.Errorf("fgrl.transport.limits.learned = %d, Stats.LimitsLearned = %d: a learned limit's end (no 429, Body nil) was counted as a limit learned", got, want)
		}
	})
}

// attackSpanAttrs runs one call through a transport over base, instrumented,
// inside a span, and returns every span event attribute as "event key=value".
func attackSpanAttrs(t *testing.T, base http.RoundTripper, auth string) []string {
	t.Helper()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	tr := &transport.Transport{Base: base, TitleID: attackTitle, RetryWindow: -1}
	if err := fgrlotel.Instrument(tr, fgrlotel.WithMeterProvider(sdkmetric.NewMeterProvider())); err != nil {
		t.Fatal(err)
	}
	ctx, span := tp.Tracer("atk").Start(context.Background(), "game")
	attackGet(t, &http.Client{Transport: tr}, ctx, attackProfile, auth)
	span.End()
	var out []string
	for _, s := range spans.Ended() {
		for _, ev := range s.Events() {
			for _, a := range ev.Attributes {
				out = append(out, ev.Name+" "+string(a.Key)+"="+a.Value.String())
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("setup: no span event")
	}
	return out
}

// a429 answers 429 with limitType set to text (JSON-escaped by the caller).
func a429(limitType string) roundTripFunc {
	return func(req *http.Request) (*http.Response, error) {
		body := `{"currentRequests": 11, "maxRequests": 10, "periodInSeconds": 15, "limitType": "` + limitType + `", "debugMessage": "` + limitType + `"}`
		return &http.Response{StatusCode: 429, Header: http.Header{"Retry-After": {"1"}, "Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
	}
}

// The package doc of fgrlotel: "Never a user, token, userhash or XUID:
// they are personal data"; transport.Event's doc: "It names the service,
// never the user: no userhash, token or XUID"; fgrlotel records "for a
// 429, the body's fields (... type)" on the span; the transport scrubs the
// attempt's credentials from that text (transport/errors.go: "The
// service's text goes on to errors, logs and span attributes: without the
// credentials the attempt sent").
//
// TestAttackSpan429NoUserhash: a service whose 429 quotes the caller's
// userhash in limitType (the transport read it from the Authorization
// header it sent: x=<userhash>) puts it on the span as
// fgrl.limit.type. The token beside it is scrubbed; the userhash is not.
func TestAttackSpan429NoUserhash(t *testing.T) {
	const uhs = "3141592653589793238"
	auth := "XBL3.0 x=" + uhs + ";atk-not-a-real-token-0123456789abcdefghij"
	for _, a := range attackSpanAttrs(t, a429("Rate for "+uhs), auth) {
		if strings.Contains(a, uhs) {
			t.Errorf("span event attribute holds the caller's userhash: %s", a)
		}
	}
}

// held: the same 429 text, quoting the token the call sent, with escape
// codes and 10,000 bytes more: no span attribute holds the token or a
// control character, and fgrl.limit.type stays within 64 bytes (the
// transport clips limitType to 64 bytes); an error is recorded by its
// type only ("error.type"), never its text.
func TestAttackSpan429TokenScrubbed(t *testing.T) {
	const tok = "atk-not-a-real-token-0123456789abcdefghij"
	auth := "XBL3.0 x=3141592653589793238;" + tok
	for _, a := range attackSpanAttrs(t, a429("Rate "+tok+` \u001b[2J\u009b`+strings.Repeat("x", 10000)), auth) {
		if strings.Contains(a, tok) || strings.ContainsFunc(a, func(r rune) bool { return r < 0x20 || r >= 0x7f && r < 0xa0 }) {
			t.Errorf("span event attribute: %q", a)
		}
		if v, ok := strings.CutPrefix(a, "fgrl.server_429 fgrl.limit.type="); ok && len(v) > 64 {
			t.Errorf("fgrl.limit.type is %d bytes", len(v))
		}
	}
	fail := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		return nil, errors.New("dial " + req.URL.String() + " with " + req.Header.Get("Authorization") + ": refused")
	})
	for _, a := range attackSpanAttrs(t, fail, auth) {
		if strings.Contains(a, tok) || strings.Contains(a, "refused") {
			t.Errorf("span event attribute holds the error's text: %q", a)
		}
	}
}

// The package doc of fgrlotel: "fgrl.transport.attempts counter, +
// fgrl.outcome: 2xx 3xx 4xx 429 5xx error". net/http's client takes any
// three-digit status (HTTP/1.1 799), and so does a Base.
//
// TestAttackOutcomeDocumented: an attempt answered 799 is counted under
// an outcome the doc does not list ("other"): a dashboard summing the
// documented outcomes misses it.
func TestAttackOutcomeDocumented(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 799, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("")), Request: req}, nil
	})
	tr := &transport.Transport{Base: base, TitleID: attackTitle, RetryWindow: -1}
	if err := fgrlotel.Instrument(tr, fgrlotel.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))); err != nil {
		t.Fatal(err)
	}
	attackGet(t, &http.Client{Transport: tr}, context.Background(), attackProfile, mock.Token("2533274791234567", attackTitle))
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	// The doc now lists 1xx and other (a status outside 100-599) too.
	documented := map[string]bool{"1xx": true, "2xx": true, "3xx": true, "4xx": true, "429": true, "5xx": true, "error": true, "other": true}
	n := 0
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if d, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == "fgrl.transport.attempts" {
				for _, p := range d.DataPoints {
					n++
					if v, _ := p.Attributes.Value("fgrl.outcome"); !documented[v.AsString()] {
						t.Errorf("fgrl.transport.attempts has fgrl.outcome=%q, not one of the documented 1xx 2xx 3xx 4xx 429 5xx error other", v.AsString())
					}
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("setup: no attempt counted")
	}
}
