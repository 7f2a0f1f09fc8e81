package proxy

import (
	"net/http"
	"strings"
	"testing"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/xblgo/fgrl/fgrlotel"
	"github.com/xblgo/fgrl/mock"
)

// TestTraces: with the servers' handlers wrapped by otelhttp
// (Config.ConfigureServer) and the transport instrumented by fgrlotel,
// each call is a server span in the application's own trace (its
// traceparent), carrying the transport's events as it emits them (the
// attempt, the local refusal), and no attribute holds a token.
func TestTraces(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	f := serve(t, func(c *Config) {
		if err := fgrlotel.Instrument(c.Transport); err != nil {
			t.Fatal(err)
		}
		c.ConfigureServer = func(srv *http.Server) {
			srv.ReadHeaderTimeout = defaultHeaderTimeout
			srv.Handler = otelhttp.NewHandler(srv.Handler, "xblcall proxy", otelhttp.WithTracerProvider(tp),
				otelhttp.WithPropagators(propagation.TraceContext{}))
		}
	})
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	burst(t, f.client, 11, profileURL, xuid1, HeaderFailFast, "true", "traceparent", parent)
	events := map[string]int{}
	_, secret, _ := strings.Cut(mock.Token(xuid1, title), ";")
	for _, s := range rec.Ended() {
		if s.SpanKind().String() != "server" || s.Name() != "GET" { // the tunnels' CONNECTs have spans of their own
			continue
		}
		if got := s.SpanContext().TraceID().String(); got != "4bf92f3577b34da6a3ce929d0e0e4736" {
			t.Errorf("a call's span is in trace %s, not the application's", got)
		}
		for _, e := range s.Events() {
			events[e.Name]++
		}
		for _, a := range s.Attributes() {
			if strings.Contains(a.Value.String(), secret) {
				t.Errorf("span attribute %s holds the token", a.Key)
			}
		}
	}
	if events["fgrl.attempt"] != 10 || events["fgrl.local_refusal"] != 1 {
		t.Errorf("span events %v, want 10 fgrl.attempt and 1 fgrl.local_refusal", events)
	}
}
