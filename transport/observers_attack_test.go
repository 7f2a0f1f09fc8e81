package transport_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/xblgo/fgrl/internal/clock"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/ratelimit"
	"github.com/xblgo/fgrl/transport"
)

// answer429 is a 429 answer to req with body text.
func answer429(req *http.Request, body string) *http.Response {
	return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{}, Request: req,
		Body: io.NopCloser(strings.NewReader(body))}
}

// stillClock is a clock whose time moves only when the test moves it; its
// sleeps return at once.
type stillClock struct{ now atomic.Int64 }

func (c *stillClock) Now() time.Time { return time.Unix(0, c.now.Load()) }
func (c *stillClock) Sleep(ctx context.Context, d time.Duration) error {
	c.now.Add(int64(d))
	return ctx.Err()
}
func (c *stillClock) AfterFunc(d time.Duration, f func()) clock.Stopper {
	return time.AfterFunc(time.Hour, f)
}

// printable reports whether s is text an observer can print as it is:
// valid UTF-8 without control characters.
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 {
			return false
		}
	}
	return true
}

// TestObservedStoreAspectClipped: a 429 in the Store's text form whose aspect
// is 20,000 bytes of escape codes and the call's own token. Every string an
// observer receives from a server is clipped, escaped and without the
// call's credentials: parse429 does that for LimitType and DebugMessage,
// not for Body.Aspect, which Event.Body carries to every Observe hook.
func TestObservedStoreAspectClipped(t *testing.T) {
	tok := mock.Token("2533274790000001", "1234567890")
	aspect := "\x1b[2J\x1b]0;pwned\x07" + tok + strings.Repeat("A", 20000) + "\xff"
	base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		return answer429(req, ratelimit.StoreText(10, 15, aspect)), nil
	})
	var mu sync.Mutex
	var bodies []ratelimit.Body
	tr := &transport.Transport{Base: base, TitleID: "1234567890", RetryWindow: -1,
		Observe: func(_ context.Context, e transport.Event) {
			if e.Body != nil {
				mu.Lock()
				bodies = append(bodies, *e.Body)
				mu.Unlock()
			}
		}}
	req, _ := http.NewRequest("GET", policyURL, nil)
	req.Header.Set("Authorization", tok)
	if resp, err := tr.RoundTrip(req); err == nil {
		resp.Body.Close()
	}
	if len(bodies) == 0 {
		t.Fatal("no event carried the 429's body")
	}
	for _, b := range bodies {
		for name, s := range map[string]string{"Aspect": b.Aspect, "DebugMessage": b.DebugMessage, "LimitType": b.LimitType} {
			if len(s) > 200 || !printable(s) || strings.Contains(s, tok[strings.LastIndex(tok, ";")+1:]) {
				t.Errorf("Event.Body.%s: %d bytes, plain %v, token %v: %.80q", name, len(s), printable(s),
					strings.Contains(s, tok[strings.LastIndex(tok, ";")+1:]), s)
			}
		}
	}
}

// TestObserverReadsLearnedLimits: EventLimitLearned's doc points to
// Transport.LearnedLimits, so an observer reads them when it hears one.
// When one user's learned limit ends, refreshLearned reports it while it
// holds the learner's lock, and LearnedLimits, asking for that lock on the
// call's goroutine, waits for ever: the call never ends.
func TestObserverReadsLearnedLimits(t *testing.T) {
	base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		return answer429(req, `{"version":1,"currentRequests":7,"maxRequests":6,"periodInSeconds":15,"limitType":"Rate"}`), nil
	})
	clk := &stillClock{}
	clk.now.Store(time.Now().UnixNano())
	var tr *transport.Transport
	var blocked atomic.Bool
	tr = &transport.Transport{Base: base, TitleID: "1234567890", RetryWindow: -1,
		Observe: func(_ context.Context, e transport.Event) {
			if e.Kind != transport.EventLimitLearned || !strings.Contains(e.Reason, "expired") {
				return
			}
			done := make(chan struct{})
			go func() { tr.LearnedLimits(); close(done) }()
			select {
			case <-done:
			case <-time.After(3 * time.Second):
				blocked.Store(true) // the goroutine ends once the lock is let go
			}
		}}
	ctx := clock.With(context.Background(), clk)
	call := func(xuid string) {
		req, _ := http.NewRequestWithContext(ctx, "GET", policyURL, nil)
		req.Header.Set("Authorization", mock.Token(xuid, "1234567890"))
		if resp, err := tr.RoundTrip(req); err == nil {
			resp.Body.Close()
		}
	}
	call("2533274790000001") // learns burst 6 for this user alone
	if n := len(tr.LearnedLimits()); n == 0 {
		t.Fatal("nothing learned")
	}
	clk.now.Add(int64(time.Hour)) // the key's limit has ended
	call("2533274790000002")
	if blocked.Load() {
		t.Error("an Observe hook reading LearnedLimits on an EventLimitLearned (a key's limit ended) blocks: the transport reports it under its lock")
	}
}

// TestObservedLearnedScopeEscaped: a host the limits data lacks is learned
// as the scope "host:" and the host, which LearnedLimits hands to
// observers (transportprom makes it a label): with an escape code in the
// host (a Base other than net/http's sends it; an invalid byte becomes
// U+FFFD as the key lowercases it), the scope was not escaped.
func TestObservedLearnedScopeEscaped(t *testing.T) {
	base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		return answer429(req, `{"version":1,"currentRequests":7,"maxRequests":6,"periodInSeconds":15,"limitType":"Rate"}`), nil
	})
	var mu sync.Mutex
	var scopes []string
	tr := &transport.Transport{Base: base, TitleID: "1234567890", RetryWindow: -1,
		Observe: func(_ context.Context, e transport.Event) {
			mu.Lock()
			scopes = append(scopes, e.Scope)
			mu.Unlock()
		}}
	for _, xuid := range []string{"2533274790000001", "2533274790000002"} { // the second confirms it for the scope
		req, _ := http.NewRequest("GET", "https://example.com/x", nil)
		req.Host = "evil\xff\x1b[2J.example.com"
		req.Header.Set("Authorization", mock.Token(xuid, "1234567890"))
		if resp, err := tr.RoundTrip(req); err == nil {
			resp.Body.Close()
		}
	}
	ls := tr.LearnedLimits()
	if len(ls) == 0 {
		t.Fatal("nothing learned")
	}
	for _, l := range ls {
		if !printable(l.Scope) {
			t.Errorf("LearnedLimit.Scope %q (user %q): not escaped", l.Scope, l.User)
		}
	}
	for _, s := range scopes {
		if !printable(s) {
			t.Errorf("Event.Scope %q: not escaped", s)
		}
	}
}

// TestObservedLogUserNotAToken: Parse keys a call by whatever precedes the
// ';' of its Authorization, and xblauth says what a record or a log keeps
// is a userhash only (1 to 20 digits): a client that sends its token in
// the userhash's place ("XBL3.0 x=<token>;<signature>") had the token,
// escape codes and all, in the "user" field of every log record, and in
// LearnedLimit.User.
func TestObservedLogUserNotAToken(t *testing.T) {
	const secret = "eyJhbGciOiJSUzI1NiJ9SECRETPART"
	base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		return answer429(req, `{"version":1,"currentRequests":7,"maxRequests":6,"periodInSeconds":15,"limitType":"Rate"}`), nil
	})
	var logs strings.Builder // written on this goroutine only
	tr := &transport.Transport{Base: base, TitleID: "1234567890", RetryWindow: -1,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	req, _ := http.NewRequest("GET", policyURL, nil)
	req.Header.Set("Authorization", "XBL3.0 x="+secret+"\x1b[2J;sig")
	if resp, err := tr.RoundTrip(req); err == nil {
		resp.Body.Close()
	}
	out := logs.String()
	if out == "" {
		t.Fatal("nothing logged")
	}
	if strings.Contains(out, "SECRETPART") || strings.Contains(out, "\\x1b") || strings.Contains(out, "\x1b") {
		t.Errorf("the log repeats the Authorization's text before ';':\n%.400s", out)
	}
	for _, l := range tr.LearnedLimits() {
		if strings.Contains(l.User, "SECRETPART") {
			t.Errorf("LearnedLimit.User %q", l.User)
		}
	}
}

// TestObservedBaseErrorQuotesQueryToken: a base RoundTripper whose error
// quotes the request's URL as text (not a *url.Error: a proxy client, a
// recorder, fmt.Errorf("%s: ...", req.URL)) with a token in its query.
// The attempt's error is scrubbed of the headers' credentials only, so the
// query's token reached Event.Err, the log's "error" and the caller.
func TestObservedBaseErrorQuotesQueryToken(t *testing.T) {
	const secret = "QUERYSECRET0123456789"
	for _, s := range baseErrorTexts(t, policyURL+"&access_token="+secret) {
		if strings.Contains(s, secret) {
			t.Errorf("the query's token in %.300q", s)
		}
	}
}

// TestObservedRefreshErrorQuotesToken: a RefreshToken whose error quotes the
// request's Authorization (its sign-in library's error names the token it
// could not refresh): EventRefreshFailed's Err went to the log and to
// Observe as it was, token and all.
func TestObservedRefreshErrorQuotesToken(t *testing.T) {
	tok := mock.Token("2533274790000001", "1234567890")
	secret := tok[strings.LastIndex(tok, ";")+1:]
	base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusUnauthorized, Header: http.Header{}, Request: req, Body: http.NoBody}, nil
	})
	var logs strings.Builder
	var errs []string
	tr := &transport.Transport{Base: base, TitleID: "1234567890",
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Observe: func(_ context.Context, e transport.Event) {
			if e.Err != nil {
				errs = append(errs, e.Err.Error())
			}
		},
		RefreshToken: func(req *http.Request) (string, error) {
			return "", errors.New("refresh failed for " + req.Header.Get("Authorization"))
		}}
	req, _ := http.NewRequest("GET", policyURL, nil)
	req.Header.Set("Authorization", tok)
	if resp, err := tr.RoundTrip(req); err == nil {
		resp.Body.Close()
	}
	if len(errs) == 0 {
		t.Fatal("no EventRefreshFailed error seen")
	}
	for _, s := range append(errs, logs.String()) {
		if strings.Contains(s, secret) {
			t.Errorf("the token in %.300q", s)
		}
	}
}

// TestObservedLogFieldsClipped: every string an observer gets from a request
// is clipped: a method of 100,000 bytes (a valid token for net/http) and a
// host of 100,000 bytes were written whole into each log record.
func TestObservedLogFieldsClipped(t *testing.T) {
	base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusNotFound, Header: http.Header{}, Request: req, Body: http.NoBody}, nil
	})
	var logs strings.Builder
	tr := &transport.Transport{Base: base, TitleID: "1234567890", RetryWindow: -1,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	req, err := http.NewRequest(strings.Repeat("X", 100000), "https://"+strings.Repeat("a", 100000)+".example.com/x", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", mock.Token("2533274790000001", "1234567890"))
	if resp, err := tr.RoundTrip(req); err == nil {
		resp.Body.Close()
	}
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		if len(line) > 2000 {
			t.Errorf("a log record of %d bytes: %.200s...", len(line), line)
		}
	}
}

// TestObservedEchoWithoutResponseRequest: a Base that answers without
// setting Response.Request (a stub, a recorder, a cache) and a service
// that echoes the call's token in its 429's limitType and debugMessage:
// the body's text is scrubbed of the credentials of the request it
// answers, which the transport knows whatever the Base set.
func TestObservedEchoWithoutResponseRequest(t *testing.T) {
	tok := mock.Token("2533274790000001", "1234567890")
	secret := tok[strings.LastIndex(tok, ";")+1:]
	base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		r := answer429(req, `{"version":1,"currentRequests":7,"maxRequests":6,"periodInSeconds":15,"limitType":"`+secret+`","debugMessage":"`+secret+`"}`)
		r.Request = nil
		return r, nil
	})
	var texts []string
	tr := &transport.Transport{Base: base, TitleID: "1234567890", RetryWindow: -1,
		Observe: func(_ context.Context, e transport.Event) {
			if e.Body != nil {
				texts = append(texts, e.Body.LimitType, e.Body.DebugMessage)
			}
		}}
	req, _ := http.NewRequest("GET", policyURL, nil)
	req.Header.Set("Authorization", tok)
	resp, err := tr.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
	}
	var te *transport.ThrottleError
	if errors.As(err, &te) && te.Body != nil {
		texts = append(texts, te.Body.LimitType, te.Body.DebugMessage)
	}
	if len(texts) == 0 {
		t.Fatal("no body seen")
	}
	for _, s := range texts {
		if strings.Contains(s, secret[:20]) {
			t.Errorf("the token echoed: %.100q", s)
		}
	}
}
