package fgrlotel

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/transport"
)

// BenchmarkObserve is one admitted call through the transport to the
// in-process mock, side by side: no hook, the hook with the no-op meter
// provider (OpenTelemetry's default), and the SDK recording metrics and
// span events on a sampled span.
func BenchmarkObserve(b *testing.B) {
	lim, err := limits.Read(strings.NewReader(`{"rules": [{"service": "profile", "hosts": ["profile.xboxlive.com"], "burst": 100000, "sustain": 100000}]}`))
	if err != nil {
		b.Fatal(err)
	}
	sdk := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	tp := sdktrace.NewTracerProvider()
	cases := []struct {
		name  string
		setup func(*transport.Transport)
		ctx   func() (context.Context, func())
	}{
		{"none", func(*transport.Transport) {}, nil},
		{"noop", func(t *transport.Transport) { Instrument(t, WithMeterProvider(noop.NewMeterProvider())) }, nil},
		{"sdk", func(t *transport.Transport) { Instrument(t, WithMeterProvider(sdk)) }, func() (context.Context, func()) {
			ctx, span := tp.Tracer("b").Start(context.Background(), "call")
			return ctx, func() { span.End() }
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			tr := &transport.Transport{Base: mock.Must(mock.New(mock.Config{Limits: lim})), Limits: lim, TitleID: title}
			c.setup(tr)
			reqs := make([]*http.Request, 1000) // users, so that no budget runs out
			for i := range reqs {
				reqs[i], _ = http.NewRequest("GET", profile, nil)
				reqs[i].Header.Set("Authorization", mock.Token(strconv.Itoa(2533274790000000+i), title))
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				r := reqs[i%len(reqs)]
				i++
				end := func() {}
				if c.ctx != nil {
					var ctx context.Context
					ctx, end = c.ctx()
					r = r.WithContext(ctx)
				}
				resp, err := tr.RoundTrip(r)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				end()
			}
		})
	}
}
