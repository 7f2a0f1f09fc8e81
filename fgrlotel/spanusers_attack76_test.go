package fgrlotel_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/xblgo/fgrl/fgrlotel"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/transport"
)

// Outside attack 187: the users a request's URL and a 429's text name, as
// fgrlotel's span events show them (fgrl.limit.type is the 429's
// limitType; error.type names an error without its text).

const (
	attack76TokenXUID = "2533274791234567"
	attack76Gamertag  = "MajorNelson1"
	attack76Batch     = "https://profile.xboxlive.com/users/batch/profile/settings"
)

type attack76RT func(*http.Request) (*http.Response, error)

func (f attack76RT) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// attack76429 answers 429 with limitType text.
func attack76429(text string) http.RoundTripper {
	return attack76RT(func(r *http.Request) (*http.Response, error) {
		body := `{"currentRequests":11,"maxRequests":10,"periodInSeconds":15,"limitType":` + strconv.Quote(text) + `}`
		return &http.Response{StatusCode: 429, Header: http.Header{"Retry-After": {"7"}}, Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
	})
}

// attack76Spans makes one call of rawURL through an instrumented Transport
// and returns every span event attribute as text.
func attack76Spans(t *testing.T, base http.RoundTripper, rawURL string) (attrs []string) {
	t.Helper()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	tr := &transport.Transport{Base: base, TitleID: "1234567890", RetryWindow: -1}
	if err := fgrlotel.Instrument(tr); err != nil {
		t.Fatal(err)
	}
	ctx, span := tp.Tracer("atk").Start(context.Background(), "game")
	req, err := http.NewRequestWithContext(ctx, "GET", rawURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", mock.Token(attack76TokenXUID, "1234567890"))
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

func attack76NoUser(t *testing.T, name string, attrs []string, leaks ...string) {
	t.Helper()
	for _, a := range attrs {
		for _, l := range leaks {
			if strings.Contains(strings.ToLower(a), strings.ToLower(l)) {
				t.Errorf("%s: span event names the user (%q): %s", name, l, a)
			}
		}
	}
}

func attack76Has(t *testing.T, name string, attrs []string, wants ...string) {
	t.Helper()
	all := strings.Join(attrs, "\n")
	for _, w := range wants {
		if !strings.Contains(all, w) {
			t.Errorf("%s: %q lost from the span events:\n%s", name, w, all)
		}
	}
}

// BREAK. Promise (transport.Event, which fgrlotel turns into span
// events): "a 429's text ... [is] scrubbed of the users the request's URL
// names: ... its query's xuid, xuids, gt and gamertag". A query's gamertag
// with a space (?gamertag=Major%20Nelson1) is cut at the space once
// decoded; a 429 whose limitType names "Major Nelson1" keeps it in the
// fgrl.server_429 span event's fgrl.limit.type.
func TestAttack76SpanQueryGamertagWithSpace(t *testing.T) {
	u := "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag&gamertag=Major%20Nelson1"
	attack76NoUser(t, u, attack76Spans(t, attack76429("Rate for Major Nelson1"), u), "Major Nelson1", "Nelson1")
}

// BREAK. Promise (commit c219af7 / Event): users "the scrubbed text
// itself" names by "query pairs" are scrubbed. A pair in parentheses,
// "(gt=MajorNelson1)", is taken as the user "MajorNelson1)", and a pair
// with its '=' percent-encoded ("gt%3DMajorNelson1") is not read: the
// limitType keeps the gamertag in the span event.
func TestAttack76SpanTextPairs(t *testing.T) {
	for _, text := range []string{
		"Rate (gt=" + attack76Gamertag + ") " + attack76Gamertag,
		"Rate gt%3D" + attack76Gamertag,
	} {
		attack76NoUser(t, text, attack76Spans(t, attack76429(text), attack76Batch), attack76Gamertag)
	}
}

// BREAK (over-scrubbing). Promise (transport.Event): "It names the
// service, never the user", and the 429's text is scrubbed "of the users".
// A limitType "xuid=…,scope=presence/write" loses the scope in the span
// event: the pair's value is split at commas and "scope=presence/write" is
// taken for a user.
func TestAttack76SpanPairListOverScrubs(t *testing.T) {
	text := "Rate xuid=2533274790395904,scope=presence/write"
	attrs := attack76Spans(t, attack76429(text), attack76Batch)
	attack76NoUser(t, "xuid list", attrs, "2533274790395904")
	attack76Has(t, "xuid list", attrs, "scope=presence/write")
}

// held: a limitType naming the user by selector (any case, %28-encoded)
// or by an XUID-long number is scrubbed in the span event, which keeps the
// status, counts, Retry-After and scope; an error's span event names its
// type only (no text: a Base's error quoting the user is not shown).
func TestAttack76SpanSelectorsScrubbedMeaningKept(t *testing.T) {
	for _, text := range []string{
		"Rate GAMERTAG(" + attack76Gamertag + ")",
		"Rate gt%28" + attack76Gamertag + "%29",
		"Rate user 2533274790395904",
	} {
		attrs := attack76Spans(t, attack76429(text), attack76Batch)
		attack76NoUser(t, text, attrs, attack76Gamertag, "2533274790395904")
		attack76Has(t, text, attrs, "http.response.status_code=429", "fgrl.limit.current_requests=11",
			"fgrl.limit.max_requests=10", "fgrl.limit.period_s=15", "fgrl.wait_s=7", "fgrl.scope=profile", "fgrl.limit.type=Rate ")
	}
	errBase := attack76RT(func(*http.Request) (*http.Response, error) {
		return nil, errors.New("refused gamertag (" + attack76Gamertag + ")")
	})
	attrs := attack76Spans(t, errBase, attack76Batch)
	attack76NoUser(t, "err", attrs, attack76Gamertag)
	attack76Has(t, "err", attrs, "error.type=network")
}
