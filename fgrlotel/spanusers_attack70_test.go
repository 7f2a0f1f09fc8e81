package fgrlotel_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/xblgo/fgrl/fgrlotel"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/transport"
)

const (
	attack70TokenXUID = "2533274791234567"
	attack70URLXUID   = "2533274799876543"
)

type attack70RT func(*http.Request) (*http.Response, error)

func (f attack70RT) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// attack70429 answers 429 with limitType quote(r).
func attack70429(quote func(*http.Request) string) http.RoundTripper {
	return attack70RT(func(r *http.Request) (*http.Response, error) {
		body := `{"currentRequests":11,"maxRequests":10,"periodInSeconds":15,"limitType":` + strconv.Quote(quote(r)) + `}`
		return &http.Response{StatusCode: 429, Header: http.Header{"Retry-After": {"1"}}, Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
	})
}

func attack70QuoteURI(r *http.Request) string { return "refused " + r.URL.RequestURI() }

// attack70SpanAttrs makes one call of req through an instrumented Transport and
// returns every span event attribute as text.
func attack70SpanAttrs(t *testing.T, base http.RoundTripper, req *http.Request) (attrs []string) {
	t.Helper()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	tr := &transport.Transport{Base: base, TitleID: "1234567890", RetryWindow: -1}
	if err := fgrlotel.Instrument(tr); err != nil {
		t.Fatal(err)
	}
	ctx, span := tp.Tracer("atk").Start(context.Background(), "game")
	req = req.WithContext(ctx)
	req.Header.Set("Authorization", mock.Token(attack70TokenXUID, "1234567890"))
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
	if len(attrs) == 0 {
		t.Fatalf("setup: no span events")
	}
	return attrs
}

func attack70Get(t *testing.T, rawURL string) *http.Request {
	t.Helper()
	req, err := http.NewRequest("GET", rawURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func attack70NoUser(t *testing.T, name string, attrs []string, leaks ...string) {
	t.Helper()
	for _, a := range attrs {
		for _, l := range leaks {
			if strings.Contains(strings.ToLower(a), strings.ToLower(l)) {
				t.Errorf("%s: span attribute names the user (%q): %s", name, l, a)
			}
		}
	}
}

// BREAK. Promise (package fgrlotel): "Never a user, token, userhash or
// XUID: they are personal data" (span events carry "for a 429, the body's
// fields (... type)"); transport.Event: the 429's text is scrubbed of "its
// query's xuid, xuids, gt and gamertag". A path of 33 XUIDs makes the
// transport take the path whole and never read the query: a 429 quoting
// the request puts "gamertag=MajorNelson1" on the span event's
// fgrl.limit.type.
func TestAttack70SpanPastMaxPathQueryUser(t *testing.T) {
	var xs []string
	for i := range 33 {
		xs = append(xs, fmt.Sprintf("25332747900%05d", i))
	}
	u := "https://peoplehub.xboxlive.com/users/me/people/xuids(" + strings.Join(xs, ",") + ")/decoration/detail?gamertag=MajorNelson1"
	attack70NoUser(t, u, attack70SpanAttrs(t, attack70429(attack70QuoteURI), attack70Get(t, u)), "MajorNelson1")
}

// BREAK. Promise (package fgrlotel): "Never a user, token, userhash or
// XUID". A request whose path is in URL.Opaque (net/http sends it as the
// request target): the transport reads EscapedPath, which ignores Opaque,
// and a 429 quoting the target puts gt(Major%20Nelson) on fgrl.limit.type.
func TestAttack70SpanOpaquePathUser(t *testing.T) {
	req := attack70Get(t, "https://profile.xboxlive.com/")
	req.URL.Path, req.URL.Opaque = "", "//profile.xboxlive.com/users/gt(Major%20Nelson)/profile/settings"
	attack70NoUser(t, "opaque", attack70SpanAttrs(t, attack70429(attack70QuoteURI), req), "Major%20Nelson", "Major Nelson")
}

// BREAK. Promise (package fgrlotel): "Never a user, token, userhash or
// XUID". A short gamertag's selector with a matrix parameter
// ("gt(Bob);v=2") is taken only as its segment whole: a 429 naming
// "gt(Bob)" alone puts the user on fgrl.limit.type.
func TestAttack70SpanShortSelectorInLongerSegment(t *testing.T) {
	u := "https://profile.xboxlive.com/users/gt(Bob);v=2/profile/settings"
	quote := func(*http.Request) string { return "no quota left for gt(Bob)" }
	attack70NoUser(t, u, attack70SpanAttrs(t, attack70429(quote), attack70Get(t, u)), "gt(Bob)")
}

// held: fgrlotel's "Never a user, token, userhash or XUID" for errors: a
// Base error quoting a URL whose user the transport does not scrub (a
// nested selector, an opaque path) reaches the span events only as its
// type ("error.type"), never its text.
func TestAttack70SpanErrorTypeOnly(t *testing.T) {
	errBase := attack70RT(func(r *http.Request) (*http.Response, error) {
		return nil, &url.Error{Op: "Get", URL: r.URL.String(), Err: errors.New("connection reset by peer")}
	})
	attack70NoUser(t, "nested", attack70SpanAttrs(t, errBase, attack70Get(t, "https://profile.xboxlive.com/users/batch(xuid("+attack70URLXUID+"))/profile/settings")), attack70URLXUID)
	req := attack70Get(t, "https://profile.xboxlive.com/")
	req.URL.Path, req.URL.Opaque = "", "//profile.xboxlive.com/users/xuid("+attack70URLXUID+")/profile/settings"
	attack70NoUser(t, "opaque", attack70SpanAttrs(t, errBase, req), attack70URLXUID)
}
