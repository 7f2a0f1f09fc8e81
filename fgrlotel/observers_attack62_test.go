package fgrlotel_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
	"unicode"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/xblgo/fgrl/fgrlotel"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/throttle"
	"github.com/xblgo/fgrl/transport"
)

const (
	attack62XUID  = "2533274791234567"
	attack62GT    = "AtkGamerTag77"
	attack62Title = "1234567890"
)

// attack62Series is one data point: metric name and its attributes.
type attack62Series struct {
	name  string
	attrs attribute.Set
	value float64
}

func attack62Collect(t *testing.T, r *sdkmetric.ManualReader) []attack62Series {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var out []attack62Series
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					out = append(out, attack62Series{m.Name, p.Attributes, float64(p.Value)})
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					out = append(out, attack62Series{m.Name, p.Attributes, float64(p.Count)})
				}
			}
		}
	}
	return out
}

func attack62Instrumented(t *testing.T, tr *transport.Transport) *sdkmetric.ManualReader {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	if err := fgrlotel.Instrument(tr, fgrlotel.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))); err != nil {
		t.Fatal(err)
	}
	return reader
}

// learnDown is a working shared budget store whose limit store (Learn,
// Learned) is down: a fleet's store that cannot take a 429's report.
type learnDown struct{ *throttle.MemoryBudgetStore }

func (learnDown) Learn(context.Context, throttle.LimitReport) (throttle.Learned, error) {
	return throttle.Learned{}, errors.New("limit store down")
}
func (learnDown) Learned(context.Context, time.Time) ([]throttle.Learned, error) {
	return nil, errors.New("limit store down")
}

// The package doc of fgrlotel:
//
//	fgrl.transport.budget.errors   counter (fgrl.scope only): the shared store failed
//
// TestAttack62BudgetErrorsScopeOnly: a fleet's store whose budget works but
// whose limit store fails (a 429 body's report cannot be learned there)
// is counted under fgrl.transport.budget.errors with the attributes
// fgrl.scope AND fgrl.class: the failure of Learn is emitted as the call's
// event (its class added), where the other store failures carry the scope
// alone. One failure, two shapes of series.
func TestAttack62BudgetErrorsScopeOnly(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(429)
		io.WriteString(w, `{"currentRequests":7,"maxRequests":6,"periodInSeconds":15,"limitType":"Rate"}`)
	}))
	defer srv.Close()
	tr := &transport.Transport{TitleID: attack62Title, RetryWindow: -1, Budget: learnDown{&throttle.MemoryBudgetStore{}}}
	reader := attack62Instrumented(t, tr)
	req, _ := http.NewRequest("GET", srv.URL+"/users/me/profile/settings", nil)
	req.Host = "profile.xboxlive.com"
	req.Header.Set("Authorization", mock.Token(attack62XUID, attack62Title))
	if resp, err := tr.RoundTrip(req); err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if tr.Stats().BudgetErrors == 0 {
		t.Fatalf("setup: no budget error (stats %+v)", tr.Stats())
	}
	n := 0
	for _, s := range attack62Collect(t, reader) {
		if s.name != "fgrl.transport.budget.errors" {
			continue
		}
		n++
		for _, kv := range s.attrs.ToSlice() {
			if kv.Key != "fgrl.scope" {
				t.Errorf("fgrl.transport.budget.errors carries %s=%q: the doc says fgrl.scope only", kv.Key, kv.Value.String())
			}
		}
	}
	if n == 0 {
		t.Fatal("setup: no fgrl.transport.budget.errors series")
	}
}

// The package doc of fgrlotel:
//
//	fgrl.transport.wait.duration   histogram (s), + fgrl.reason: budget, background, retry-after
//
// TestAttack62WaitReasonDocumented: a background call (Policy.Priority) that
// waits for its part of the budget is recorded under fgrl.reason
// "background", a value the package doc once did not list (transport's
// EventWait did): every wait's reason is one the doc lists, and the
// background wait is told apart.
func TestAttack62WaitReasonDocumented(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := mock.NewHandler()
		tr := &transport.Transport{Base: h, TitleID: attack62Title}
		reader := attack62Instrumented(t, tr)
		ctx := transport.WithPolicy(context.Background(), transport.Policy{Priority: transport.Background, MaxWait: 60 * time.Second})
		c := &http.Client{Transport: tr}
		for range 14 {
			attackGet(t, c, ctx, attackProfile, mock.Token(attack62XUID, attack62Title))
		}
		if tr.Stats().Waits == 0 {
			t.Fatalf("setup: no wait (stats %+v)", tr.Stats())
		}
		documented := map[string]bool{"budget": true, "background": true, "retry-after": true}
		seen := map[string]bool{}
		for _, s := range attack62Collect(t, reader) {
			if s.name != "fgrl.transport.wait.duration" {
				continue
			}
			v, _ := s.attrs.Value("fgrl.reason")
			seen[v.AsString()] = true
			if !documented[v.AsString()] {
				t.Errorf("fgrl.transport.wait.duration has fgrl.reason=%q (%v waits), not one of the documented budget, background, retry-after", v.AsString(), s.value)
			}
		}
		if !seen["background"] {
			t.Errorf("no background wait recorded (reasons %v)", seen)
		}
	})
}

// attack62Events runs one call through a Transport over srv with every event
// recorded (the Observe hook, span events), inside a span.
func attack62Events(t *testing.T, base http.RoundTripper, target, host, auth string) (events []transport.Event, spanAttrs []string) {
	t.Helper()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	var mu sync.Mutex
	tr := &transport.Transport{Base: base, TitleID: attack62Title, RetryWindow: -1, Observe: func(_ context.Context, e transport.Event) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}}
	if err := fgrlotel.Instrument(tr, fgrlotel.WithMeterProvider(sdkmetric.NewMeterProvider())); err != nil {
		t.Fatal(err)
	}
	ctx, span := tp.Tracer("atk").Start(context.Background(), "game")
	req, _ := http.NewRequestWithContext(ctx, "GET", target, nil)
	if host != "" {
		req.Host = host
	}
	req.Header.Set("Authorization", auth)
	if resp, err := tr.RoundTrip(req); err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	span.End()
	for _, s := range spans.Ended() {
		for _, ev := range s.Events() {
			for _, a := range ev.Attributes {
				spanAttrs = append(spanAttrs, ev.Name+" "+string(a.Key)+"="+a.Value.String())
			}
		}
	}
	return events, spanAttrs
}

func attack62EventText(e transport.Event) string {
	s := fmt.Sprintf("%+v", e)
	if e.Body != nil {
		s += fmt.Sprintf(" body=%+v", *e.Body)
	}
	if e.Err != nil {
		s += " err=" + e.Err.Error()
	}
	return s
}

// The package doc of fgrlotel: "Never a user, token, userhash or XUID:
// they are personal data"; its traces carry "for a 429, the body's fields
// (... type)"; transport.Event: "It names the service, never the user: no
// userhash, token or XUID."
//
// TestAttack62SpanNoPathXUID: a call for a user named in its URL path
// (/users/xuid(<XUID>)/..., /users/gt(<gamertag>)/..., as XSAPI's profile
// and people calls are made) meets a 429 whose limitType quotes that path's
// user back. The transport scrubs the token and the userhash from the
// body's text, but not the XUID or gamertag it sent in the path: they
// reach the span as fgrl.limit.type and the Observe hook as Event.Body.
func TestAttack62SpanNoPathXUID(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The service quotes the path's user in its 429 (hostile or
		// merely verbose).
		who := r.URL.Path
		if i := strings.Index(who, "/users/"); i >= 0 {
			who = who[i+len("/users/"):]
		}
		who, _, _ = strings.Cut(who, "/")
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(429)
		fmt.Fprintf(w, `{"currentRequests":11,"maxRequests":10,"periodInSeconds":15,"limitType":"Rate %s"}`, who)
	}))
	defer srv.Close()
	for _, c := range []struct{ path, user string }{
		{"/users/xuid(" + attack62XUID + ")/profile/settings?settings=Gamertag", attack62XUID},
		{"/users/gt(" + attack62GT + ")/profile/settings?settings=Gamertag", attack62GT},
	} {
		events, attrs := attack62Events(t, nil, srv.URL+c.path, "profile.xboxlive.com", mock.Token(attack62XUID, attack62Title))
		if len(attrs) == 0 || len(events) == 0 {
			t.Fatalf("setup: no span event / event for %s", c.path)
		}
		for _, a := range attrs {
			if strings.Contains(a, c.user) {
				t.Errorf("%s: span event attribute names the user: %s", c.path, a)
			}
		}
		for _, e := range events {
			if s := attack62EventText(e); strings.Contains(s, c.user) {
				t.Errorf("%s: Event names the user: %s", c.path, s)
			}
		}
	}
}

// transport.Event: "It names the service, never the user: no userhash,
// token or XUID."
//
// TestAttack62EventErrNoPathXUID: a Base that wraps its failures as
// http.Client does (*url.Error quoting the URL, as otelhttp or a retrying
// client beneath the transport does) fails a call to
// /users/xuid(<XUID>)/...: the transport redacts the URL's query and user
// info (errText, xblauth.RedactURL), but the Event's Err handed to the
// Observe hook still names the XUID of the path.
func TestAttack62EventErrNoPathXUID(t *testing.T) {
	base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		return nil, &url.Error{Op: "Get", URL: req.URL.String(), Err: errors.New("connection reset by peer")}
	})
	events, attrs := attack62Events(t, base, "https://profile.xboxlive.com/users/xuid("+attack62XUID+")/profile/settings?settings=Gamertag", "", mock.Token(attack62XUID, attack62Title))
	for _, a := range attrs {
		if strings.Contains(a, attack62XUID) {
			t.Errorf("span event attribute names the XUID: %s", a)
		}
	}
	if len(events) == 0 {
		t.Fatal("setup: no event")
	}
	for _, e := range events {
		if s := attack62EventText(e); strings.Contains(s, attack62XUID) {
			t.Errorf("Event (%s) names the XUID: %s", e.Kind, s)
		}
	}
}

// held: the package doc of fgrlotel: metrics carry fgrl.scope ("the limits
// rule"), fgrl.class ("read" or "write"), fgrl.outcome (1xx 2xx 3xx 4xx
// 429 5xx error other), fgrl.reason and fgrl.period from their documented
// sets; "Never a user, token, userhash or XUID ... one series per player
// would grow without bound".
//
// TestAttack62SeriesBoundedHostile: 10,000 calls against a loopback server,
// each with a distinct user (token, userhash, XUID and gamertag in the
// path, query and headers), a distinct host (half a rule's, half none),
// a distinct path, a status picked from 0..999 (with Retry-After and
// hostile 429 bodies: escape codes, invalid UTF-8, 4 KB of text, every
// period) and methods of the caller's choosing: the metrics stay within
// a small fixed number of series, every attribute value is valid UTF-8,
// short, free of control characters, from the documented sets, and names
// none of the users.
func TestAttack62SeriesBoundedHostile(t *testing.T) {
	periods := []int{15, 300, 0, 1, 60, 86400, -5}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i, _ := strconv.Atoi(r.Header.Get("X-Atk"))
		status := 100 + i%900
		switch i % 7 {
		case 0:
			status = 429
		case 1:
			status = 503
		}
		if status < 200 && status != 101 {
			status = 200 // 1xx other than 101 cannot end an exchange over HTTP/1.1
		}
		if status == 101 {
			status = 204
		}
		w.Header().Set("Retry-After", strconv.Itoa(i%3))
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"currentRequests":%d,"maxRequests":%d,"periodInSeconds":%d,"limitType":"%s \u001b[2J\ud800 %s %s"}`,
			i, 1+i%50, periods[i%len(periods)], r.URL.Path, r.Header.Get("Authorization"), strings.Repeat("z", 4000))
	}))
	defer srv.Close()
	tr := &transport.Transport{TitleID: attack62Title, RetryWindow: -1, MaxLearnedLimit: 0}
	reader := attack62Instrumented(t, tr)
	methods := []string{"GET", "POST", "PUT", "DELETE", "PATCH", "ATK\x01", "OPTIONS"}
	for i := range 10000 {
		xuid := strconv.Itoa(2533274790000000 + i)
		path := fmt.Sprintf("/users/xuid(%s)/profile/settings?gt=Gamer%d&access_token=tok%d", xuid, i, i)
		host := fmt.Sprintf("atk%d-%s.example.com", i, xuid)
		if i%2 == 0 {
			host = "profile.xboxlive.com"
		}
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		req.Method = methods[i%len(methods)]
		req.Host = host
		req.Header.Set("Authorization", mock.Token(xuid, attack62Title))
		req.Header.Set("X-Atk", strconv.Itoa(i))
		if resp, err := tr.RoundTrip(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	series := attack62Collect(t, reader)
	allowed := map[string]map[string]bool{
		"fgrl.class":   {"read": true, "write": true},
		"fgrl.outcome": {"1xx": true, "2xx": true, "3xx": true, "4xx": true, "429": true, "5xx": true, "error": true, "other": true},
		"fgrl.period":  {"burst": true, "sustain": true},
	}
	seen := map[string]bool{}
	for _, s := range series {
		for _, kv := range s.attrs.ToSlice() {
			v := kv.Value.String()
			seen[string(kv.Key)+"="+v] = true
			if !utf8.ValidString(v) || len(v) > 64 || strings.ContainsFunc(v, unicode.IsControl) {
				t.Errorf("%s: %s=%q", s.name, kv.Key, v)
			}
			if a, ok := allowed[string(kv.Key)]; ok && !a[v] {
				t.Errorf("%s: %s=%q outside its documented set", s.name, kv.Key, v)
			}
			if strings.Contains(v, "2533274") || strings.Contains(v, "Gamer") || strings.Contains(v, "tok") {
				t.Errorf("%s: %s=%q names a user", s.name, kv.Key, v)
			}
		}
	}
	if len(series) > 60 {
		t.Errorf("10,000 hostile calls: %d series", len(series))
	}
	t.Logf("%d series; attribute values %v; stats %+v", len(series), seen, tr.Stats())
}

// held: the package doc of fgrlotel: "fgrl.transport.attempts counter, +
// fgrl.outcome: 1xx 2xx 3xx 4xx 429 5xx error, or other (a status outside
// 100-599, which net/http takes)".
//
// TestAttack62OutcomeEdgeStatuses: a Base answering 0, 99, 100, 199, 599, 600,
// 999, 1000, -1 and 429: each is counted under one of the documented
// outcomes, 99/600/999/1000/-1 under other, and the counts add up to the
// attempts.
func TestAttack62OutcomeEdgeStatuses(t *testing.T) {
	want := map[int]string{99: "other", 100: "1xx", 199: "1xx", 599: "5xx", 600: "other", 999: "other", 1000: "other", -1: "other", 429: "429", 0: "error"}
	for status, outcome := range want {
		base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: status, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("")), Request: req}, nil
		})
		tr := &transport.Transport{Base: base, TitleID: attack62Title, RetryWindow: -1}
		reader := attack62Instrumented(t, tr)
		attackGet(t, &http.Client{Transport: tr}, context.Background(), attackProfile, mock.Token(attack62XUID, attack62Title))
		got := map[string]float64{}
		for _, s := range attack62Collect(t, reader) {
			if s.name == "fgrl.transport.attempts" {
				v, _ := s.attrs.Value("fgrl.outcome")
				got[v.AsString()] += s.value
			}
		}
		var sum float64
		for _, v := range got {
			sum += v
		}
		if sum != float64(tr.Stats().Attempts) || sum == 0 {
			t.Errorf("status %d: attempts by outcome %v, Stats.Attempts %d", status, got, tr.Stats().Attempts)
		}
		for o := range got {
			if o != outcome {
				t.Errorf("status %d: counted under fgrl.outcome=%q, want %q", status, o, outcome)
			}
		}
	}
}

// held: fgrlotel's counters are counters (monotonic sums), and Stats
// "counts what a Transport did": a collect while calls run never shows a
// counter lower than the collect before, nor Stats a field lower than the
// read before, and no collect panics.
//
// TestAttack62CollectWhileCalling: 16 goroutines of calls (429s, 503s, retries,
// waits, refusals) against a loopback mock while two goroutines collect
// the metrics and read Stats in a loop; at the end the metrics equal Stats.
func TestAttack62CollectWhileCalling(t *testing.T) {
	h := mock.NewHandler()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%5 == 0 {
			w.WriteHeader(503)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	tr := &transport.Transport{TitleID: attack62Title, RetryWindow: -1}
	reader := attack62Instrumented(t, tr)
	done := make(chan struct{})
	var watchers sync.WaitGroup
	for range 2 {
		watchers.Go(func() {
			last := map[string]float64{}
			var lastStats transport.Stats
			for {
				select {
				case <-done:
					return
				default:
				}
				sum := map[string]float64{}
				for _, s := range attack62Collect(t, reader) {
					sum[s.name+" "+s.attrs.Encoded(attribute.DefaultEncoder())] += s.value
				}
				for k, v := range sum {
					if v < last[k] {
						t.Errorf("%s went down: %v then %v", k, last[k], v)
					}
				}
				last = sum
				st := tr.Stats()
				if st.Attempts < lastStats.Attempts || st.Retries < lastStats.Retries || st.Server429s < lastStats.Server429s || st.LocalRefusals < lastStats.LocalRefusals {
					t.Errorf("Stats went down: %+v then %+v", lastStats, st)
				}
				lastStats = st
			}
		})
	}
	var calls sync.WaitGroup
	for u := range 16 {
		calls.Go(func() {
			for range 40 {
				req, _ := http.NewRequest("GET", srv.URL+"/users/me/profile/settings?settings=Gamertag", nil)
				req.Host = "profile.xboxlive.com"
				req.Header.Set("Authorization", mock.Token(strconv.Itoa(2533274790000100+u%8), attack62Title))
				if resp, err := tr.RoundTrip(req); err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}
		})
	}
	calls.Wait()
	close(done)
	watchers.Wait()
	total := map[string]float64{}
	for _, s := range attack62Collect(t, reader) {
		total[s.name] += s.value
	}
	st := tr.Stats()
	for name, want := range map[string]int64{"fgrl.transport.attempts": st.Attempts, "fgrl.transport.server_429s": st.Server429s,
		"fgrl.transport.retries": st.Retries, "fgrl.transport.local_refusals": st.LocalRefusals} {
		if total[name] != float64(want) {
			t.Errorf("%s = %v, Stats says %d", name, total[name], want)
		}
	}
	t.Logf("stats %+v", st)
}
