package fgrlotel_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/xblgo/fgrl/fgrlotel"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/transport"
)

const attack66XUID = "2533274791234567"

type attack66RT func(*http.Request) (*http.Response, error)

func (f attack66RT) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// attack66Quoting answers 429 quoting the request as the service saw it (its
// RequestURI: escaped path and query) in limitType.
var attack66Quoting = attack66RT(func(r *http.Request) (*http.Response, error) {
	body := `{"currentRequests":11,"maxRequests":10,"periodInSeconds":15,"limitType":` + strconv.Quote("Rate "+r.URL.RequestURI()) + `}`
	return &http.Response{StatusCode: 429, Header: http.Header{"Retry-After": {"1"}}, Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
})

// attack66Otel makes one call to target through an instrumented Transport and
// returns every span event attribute and metric attribute as text.
func attack66Otel(t *testing.T, base http.RoundTripper, target string) (attrs []string) {
	t.Helper()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	reader := sdkmetric.NewManualReader()
	tr := &transport.Transport{Base: base, TitleID: "1234567890", RetryWindow: -1}
	if err := fgrlotel.Instrument(tr, fgrlotel.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))); err != nil {
		t.Fatal(err)
	}
	ctx, span := tp.Tracer("atk").Start(context.Background(), "game")
	req, err := http.NewRequestWithContext(ctx, "GET", target, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", mock.Token(attack66XUID, "1234567890"))
	if resp, err := tr.RoundTrip(req); err == nil {
		resp.Body.Close()
	}
	span.End()
	for _, s := range spans.Ended() {
		for _, ev := range s.Events() {
			for _, a := range ev.Attributes {
				attrs = append(attrs, "span "+ev.Name+" "+string(a.Key)+"="+a.Value.String())
			}
		}
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					for _, kv := range p.Attributes.ToSlice() {
						attrs = append(attrs, "metric "+m.Name+" "+string(kv.Key)+"="+kv.Value.String())
					}
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					for _, kv := range p.Attributes.ToSlice() {
						attrs = append(attrs, "metric "+m.Name+" "+string(kv.Key)+"="+kv.Value.String())
					}
				}
			}
		}
	}
	if len(attrs) == 0 {
		t.Fatalf("setup: no attributes for %s", target)
	}
	return attrs
}

func attack66NoUser(t *testing.T, name string, attrs []string, leaks ...string) {
	t.Helper()
	for _, a := range attrs {
		for _, l := range leaks {
			if strings.Contains(strings.ToLower(a), strings.ToLower(l)) {
				t.Errorf("%s: attribute names the user (%q): %s", name, l, a)
			}
		}
	}
}

// BREAK. Promise (package fgrlotel): "Never a user, token, userhash or
// XUID: they are personal data" (span events carry "for a 429, the body's
// fields (... type)"). A 429 quoting the request line as sent: a short
// gamertag with a space as package client writes it (gt(Jo%20Ed)), a
// selector the caller percent-encoded (gt%28Bob%29), and people hub's
// xuids(…) selector reach the span event's fgrl.limit.type.
func TestAttack66SpanLimitTypeNamesUser(t *testing.T) {
	for _, tc := range []struct {
		url   string
		leaks []string
	}{
		{"https://profile.xboxlive.com/users/gt(Jo%20Ed)/profile/settings", []string{"Jo%20Ed"}},
		{"https://profile.xboxlive.com/users/gt%28Bob%29/profile/settings", []string{"gt%28Bob%29"}},
		{"https://peoplehub.xboxlive.com/users/me/people/xuids(" + attack66XUID + ")/decoration/detail", []string{attack66XUID}},
	} {
		attack66NoUser(t, tc.url, attack66Otel(t, attack66Quoting, tc.url), tc.leaks...)
	}
}

// held: fgrlotel's "Never a user, token, userhash or XUID": the metrics'
// attributes and the span events of a call that failed with an error
// quoting its URL (short gamertag in wire spelling, an XUID) carry only
// the error's type, never its text; and a 429 quoting xuid(…) or a long
// gamertag carries neither.
func TestAttack66OtelErrorTypeOnly(t *testing.T) {
	errBase := attack66RT(func(r *http.Request) (*http.Response, error) {
		return nil, &url.Error{Op: "Get", URL: r.URL.String(), Err: errors.New("connection reset by peer")}
	})
	for _, u := range []string{
		"https://profile.xboxlive.com/users/gt(Jo%20Ed)/profile/settings",
		"https://peoplehub.xboxlive.com/users/me/people/xuids(" + attack66XUID + ")/decoration/detail",
	} {
		attack66NoUser(t, "err "+u, attack66Otel(t, errBase, u), "Jo%20Ed", "Jo Ed", attack66XUID)
	}
	for _, u := range []string{
		"https://profile.xboxlive.com/users/xuid(" + attack66XUID + ")/profile/settings",
		"https://profile.xboxlive.com/users/gt(Major%20Nelson)/profile/settings",
	} {
		attack66NoUser(t, "429 "+u, attack66Otel(t, attack66Quoting, u), attack66XUID, "Major%20Nelson", "Major Nelson")
	}
}
