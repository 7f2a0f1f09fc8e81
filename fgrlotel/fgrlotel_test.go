package fgrlotel

import (
	"context"
	"io"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/transport"
)

const (
	profile = "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag"
	xuid    = "2533274791234567"
	title   = "1234567890"
)

func get(t testing.TB, c *http.Client, ctx context.Context, url string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	req.Header.Set("Authorization", mock.Token(xuid, title))
	resp, err := c.Do(req)
	if err != nil {
		return // refusals are expected here
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// sums reads every counter and histogram count as "name{attr=value,...} n".
func sums(t *testing.T, r *sdkmetric.ManualReader) []string {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					out = append(out, series(m.Name, p.Attributes)+" "+itoa(p.Value))
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					out = append(out, series(m.Name, p.Attributes)+" count "+itoa(int64(p.Count)))
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

func series(name string, set attribute.Set) string {
	var kv []string
	for _, a := range set.ToSlice() {
		kv = append(kv, string(a.Key)+"="+a.Value.String())
	}
	return name + "{" + strings.Join(kv, ",") + "}"
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestMetrics: 40 profile reads through the budgeted transport (it waits
// for the burst windows and refuses past the sustain limit), and 11 through
// an XSAPI-style one against a spent service (429s, then a retry). Every
// series names a scope and a class, never a user.
func TestMetrics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reader := sdkmetric.NewManualReader()
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
		tr := &transport.Transport{Base: mock.NewHandler(), TitleID: title}
		if err := Instrument(tr, WithMeterProvider(mp)); err != nil {
			t.Fatal(err)
		}
		c := &http.Client{Transport: tr}
		for range 31 {
			get(t, c, context.Background(), profile)
		}
		spent := mock.NewHandler()
		for range 10 {
			get(t, &http.Client{Transport: spent}, context.Background(), profile)
		}
		xsapi := &transport.Transport{Base: spent, TitleID: title, DisableBudget: true, RetryWindow: time.Minute}
		Instrument(xsapi, WithMeterProvider(mp))
		get(t, &http.Client{Transport: xsapi}, context.Background(), profile)

		want := []string{
			"fgrl.transport.attempts{fgrl.class=read,fgrl.outcome=2xx,fgrl.scope=profile} 31",
			"fgrl.transport.attempts{fgrl.class=read,fgrl.outcome=429,fgrl.scope=profile} 1",
			"fgrl.transport.local_refusals{fgrl.class=read,fgrl.reason=budget,fgrl.scope=profile} 1",
			"fgrl.transport.retries{fgrl.class=read,fgrl.reason=status 429,fgrl.scope=profile} 1",
			"fgrl.transport.server_429s{fgrl.class=read,fgrl.scope=profile} 1",
			"fgrl.transport.wait.duration{fgrl.class=read,fgrl.reason=budget,fgrl.scope=profile} count 2",
		}
		if diff := cmp.Diff(want, sums(t, reader)); diff != "" {
			t.Errorf("metrics (-want +got):\n%s", diff)
		}
	})
}

// TestSpans: with otelhttp around the transport, the call's client span
// carries an event per attempt, the 429 (with its body's fields) and the
// retry; with otelhttp under it, otelhttp makes a span per attempt and the
// events go on the caller's span.
func TestSpans(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		spans := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
		spent := func() *mock.Handler {
			h := mock.NewHandler()
			for range 10 {
				get(t, &http.Client{Transport: h}, context.Background(), profile)
			}
			return h
		}
		inner := &transport.Transport{Base: spent(), TitleID: title, DisableBudget: true, RetryWindow: time.Minute}
		Instrument(inner)
		outer := otelhttp.NewTransport(inner, otelhttp.WithTracerProvider(tp))
		get(t, &http.Client{Transport: outer}, context.Background(), profile)

		under := &transport.Transport{Base: otelhttp.NewTransport(spent(), otelhttp.WithTracerProvider(tp)),
			TitleID: title, DisableBudget: true, RetryWindow: time.Minute}
		Instrument(under)
		ctx, parent := tp.Tracer("test").Start(context.Background(), "game")
		get(t, &http.Client{Transport: under}, ctx, profile)
		parent.End()

		ended := spans.Ended()
		var got []string
		for _, s := range ended {
			var evs []string
			for _, ev := range s.Events() {
				name := ev.Name
				for _, a := range ev.Attributes {
					if a.Key == "fgrl.limit.max_requests" {
						name += "(max " + a.Value.String() + ")"
					}
				}
				evs = append(evs, name)
			}
			got = append(got, s.Name()+": "+strings.Join(evs, " "))
		}
		want := []string{
			"HTTP GET: fgrl.attempt fgrl.server_429(max 10) fgrl.retry fgrl.attempt",
			"HTTP GET: ",
			"HTTP GET: ",
			"game: fgrl.attempt fgrl.server_429(max 10) fgrl.retry fgrl.attempt",
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("spans (-want +got):\n%s", diff)
		}
	})
}

// TestLearnedMetric: a service that applies a burst of 6 where the table
// says 10 shows as one fgrl.transport.limits.learned (drift) of the burst.
func TestLearnedMetric(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		served, err := limits.Read(strings.NewReader(`{"rules": [{"service": "profile", "hosts": ["profile.xboxlive.com"], "burst": 6, "sustain": 30}]}`))
		if err != nil {
			t.Fatal(err)
		}
		h, _ := mock.New(mock.Config{Limits: served})
		reader := sdkmetric.NewManualReader()
		tr := &transport.Transport{Base: h, TitleID: title}
		Instrument(tr, WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))))
		for range 7 {
			get(t, &http.Client{Transport: tr}, context.Background(), profile)
		}
		want := "fgrl.transport.limits.learned{fgrl.class=read,fgrl.period=burst,fgrl.scope=profile} 1"
		if got := sums(t, reader); !slices.Contains(got, want) {
			t.Errorf("metrics %q lack %q", got, want)
		}
	})
}
