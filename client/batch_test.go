package client

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/transport"
)

// counting counts the requests it passes to the mock by method and path
// (the user path's XUID left out).
type counting struct {
	h    *mock.Handler
	mu   sync.Mutex
	seen map[string]int
}

func (c *counting) RoundTrip(r *http.Request) (*http.Response, error) {
	p := r.URL.Path
	if i := strings.Index(p, "xuid("); i >= 0 {
		p = p[:i] + "xuid(X)"
	}
	c.mu.Lock()
	c.seen[r.Method+" "+r.URL.Host+p]++
	c.mu.Unlock()
	return c.h.RoundTrip(r)
}

// TestBatchWindow: 30 presence lookups and 120 profile lookups one user
// makes at once go out as one presence batch and two profile batches (100
// users at most each); another acting user's lookup, alone in its window,
// is its own single-user call (no batch call listing one user); each
// caller gets its own user's record; a cancelled caller returns at once
// and the others still get theirs. Without a window every lookup is a
// call.
func TestBatchWindow(t *testing.T) {
	for _, tc := range []struct {
		name   string
		window time.Duration
		want   map[string]int
	}{
		{"5ms", 5 * time.Millisecond, map[string]int{ // the other user's lookup, alone in its window, is no batch call
			"POST userpresence.xboxlive.com/users/batch": 1, "GET userpresence.xboxlive.com/users/xuid(X)": 1,
			"POST profile.xboxlive.com/users/batch/profile/settings": 2}},
		{"off", 0, map[string]int{ // the 30, the other user's; the cancelled lookup is not sent (its context had ended)
			"GET userpresence.xboxlive.com/users/xuid(X)": 31, "GET profile.xboxlive.com/users/xuid(X)": 120}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				roomy, err := limits.Read(strings.NewReader(`{"rules": [{"service": "profile", "hosts": ["profile.xboxlive.com"], "burst": 1000, "sustain": 1000},
					{"service": "presence", "hosts": ["userpresence.xboxlive.com"], "burst": 1000, "sustain": 1000}]}`))
				if err != nil {
					t.Fatal(err)
				}
				h, err := mock.New(mock.Config{Limits: roomy}) // the lookups one by one stay within the limits
				if err != nil {
					t.Fatal(err)
				}
				base := &counting{h: h, seen: map[string]int{}}
				tr := &transport.Transport{TitleID: title, Base: base, DisableBudget: true}
				c, err := New(Config{TitleID: title, Tokens: mockTokens(), Transport: tr, BatchWindow: tc.window})
				if err != nil {
					t.Fatal(err)
				}
				u := c.As(me)
				var wg sync.WaitGroup
				var mu sync.Mutex
				var wrong []string
				xuid := func(i int) string { return strconv.Itoa(2533274790000000 + i) }
				for i := range 30 {
					wg.Go(func() {
						if p, err := u.GetPresence(context.Background(), xuid(i)); err != nil || p.XUID != xuid(i) {
							mu.Lock()
							wrong = append(wrong, "presence "+xuid(i)+": "+p.XUID+" "+errString(err))
							mu.Unlock()
						}
					})
				}
				for i := range 120 {
					wg.Go(func() {
						if p, err := u.GetProfile(context.Background(), xuid(i), []string{"Gamertag"}); err != nil || p.XUID != xuid(i) || p.Settings["Gamertag"] == "" {
							mu.Lock()
							wrong = append(wrong, "profile "+xuid(i)+": "+p.XUID+" "+errString(err))
							mu.Unlock()
						}
					})
				}
				wg.Go(func() { c.As(other).GetPresence(context.Background(), me) })
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				var e *Error
				if _, err := u.GetPresence(ctx, xuid(99)); tc.window > 0 && (!errors.Is(err, context.Canceled) || !errors.As(err, &e)) {
					t.Errorf("a cancelled lookup: %v, want an *Error wrapping context.Canceled", err)
				}
				wg.Wait()
				if len(wrong) > 0 {
					t.Errorf("lookups that got another record or an error: %q", wrong)
				}
				if diff := cmp.Diff(tc.want, base.seen); diff != "" {
					t.Errorf("requests (-want +got):\n%s", diff)
				}
			})
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// server is how the batch service answers in TestBatchLookupsKeepTheirOwnCall.
type server int

const (
	answers     server = iota // the mock answers at once
	first503                  // 503 to the requests of the window's end, then the mock
	answersAt2s               // the mock answers 2 s after a request arrives
	stalls                    // never answers
)

// staged is the batch service of one case: it serves as its mode says and
// notes the requests it saw and when each one's context ended.
type staged struct {
	h      *mock.Handler
	mode   server
	start  time.Time
	window time.Duration
	mu     sync.Mutex
	sent   int
	ended  []time.Duration
}

func (s *staged) RoundTrip(r *http.Request) (*http.Response, error) {
	s.mu.Lock()
	s.sent++
	s.mu.Unlock()
	context.AfterFunc(r.Context(), func() {
		s.mu.Lock()
		s.ended = append(s.ended, time.Since(s.start))
		s.mu.Unlock()
	})
	switch s.mode {
	case first503:
		if time.Since(s.start) == s.window {
			return &http.Response{StatusCode: http.StatusServiceUnavailable, Header: http.Header{},
				Body: http.NoBody, Request: r}, nil
		}
	case answersAt2s:
		select {
		case <-time.After(2 * time.Second):
		case <-r.Context().Done():
			return nil, r.Context().Err()
		}
	case stalls:
		<-r.Context().Done()
		return nil, r.Context().Err()
	}
	return s.h.RoundTrip(r)
}

// TestBatchLookupsKeepTheirOwnCall: lookups merged into a batch each keep
// the policy and deadline they would have had alone. A FailFast lookup is
// answered at the window's end, never after a retry made for another; a
// patient lookup is never refused because a FailFast one opened the batch;
// a longer deadline is not cut by the opener's; the batch call ends when
// the last lookup waiting for it has gone, and is not sent when every one
// left within the window.
func TestBatchLookupsKeepTheirOwnCall(t *testing.T) {
	const window = 5 * time.Millisecond
	plain := func(ctx context.Context) (context.Context, context.CancelFunc) { return ctx, func() {} }
	failFast := func(ctx context.Context) (context.Context, context.CancelFunc) {
		return transport.WithPolicy(ctx, transport.Policy{FailFast: true}), func() {}
	}
	within := func(d time.Duration) func(context.Context) (context.Context, context.CancelFunc) {
		return func(ctx context.Context) (context.Context, context.CancelFunc) { return context.WithTimeout(ctx, d) }
	}
	type lookup struct {
		ctx    func(context.Context) (context.Context, context.CancelFunc)
		want   string        // "record", "HTTP 503", "deadline"
		at, by time.Duration // it returns within [at, by]
	}
	retried := [2]time.Duration{window + 2*time.Second, window + 4*time.Second} // XSAPI's first backoff: 3 s ± 1/3
	for _, tc := range []struct {
		name     string
		mode     server
		lookups  []lookup // the first opens the batch
		wantSent int
		wantEnd  time.Duration // when the last request's context ended (stalls only)
	}{
		{"FailFast opener, patient joiner, a 503", first503, []lookup{
			{failFast, "HTTP 503", window, window},
			{plain, "record", retried[0], retried[1]},
		}, 3, 0},
		{"patient opener, FailFast joiner, a 503", first503, []lookup{
			{plain, "record", retried[0], retried[1]},
			{failFast, "HTTP 503", window, window},
		}, 3, 0},
		{"short-deadline opener, long-deadline joiner, a slow answer", answersAt2s, []lookup{
			{within(time.Second), "deadline", time.Second, time.Second},
			{within(10 * time.Second), "record", window + 2*time.Second, window + 2*time.Second},
		}, 1, 0},
		{"a stalled service: the call ends with the last lookup", stalls, []lookup{
			{within(time.Second), "deadline", time.Second, time.Second},
			{within(3 * time.Second), "deadline", 3 * time.Second, 3 * time.Second},
		}, 1, 3 * time.Second},
		{"every lookup gone within the window: nothing sent", answers, []lookup{
			{within(time.Millisecond), "deadline", time.Millisecond, time.Millisecond},
			{within(2 * time.Millisecond), "deadline", 2 * time.Millisecond, 2 * time.Millisecond},
		}, 0, 0},
		{"one lookup gone within the window, the other answered", answers, []lookup{
			{within(time.Millisecond), "deadline", time.Millisecond, time.Millisecond},
			{plain, "record", window, window},
		}, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h, err := mock.New(mock.Config{})
				if err != nil {
					t.Fatal(err)
				}
				srv := &staged{h: h, mode: tc.mode, start: time.Now(), window: window}
				tr := &transport.Transport{TitleID: title, Base: srv, DisableBudget: true}
				c, err := New(Config{TitleID: title, Tokens: mockTokens(), Transport: tr, BatchWindow: window})
				if err != nil {
					t.Fatal(err)
				}
				got := make([]string, len(tc.lookups))
				at := make([]time.Duration, len(tc.lookups))
				var wg sync.WaitGroup
				for i, l := range tc.lookups {
					xuid := strconv.Itoa(2533274790000000 + i)
					wg.Go(func() {
						ctx, cancel := l.ctx(context.Background())
						defer cancel()
						p, err := c.As(me).GetPresence(ctx, xuid)
						at[i] = time.Since(srv.start)
						got[i] = outcome(err, p.XUID == xuid)
					})
					synctest.Wait() // the first opens the batch
				}
				wg.Wait()
				for i, l := range tc.lookups {
					if got[i] != l.want || at[i] < l.at || at[i] > l.by {
						t.Errorf("lookup %d: %s at %v, want %s in [%v, %v]", i, got[i], at[i], l.want, l.at, l.by)
					}
				}
				time.Sleep(time.Minute) // in the bubble: every batch call ends
				srv.mu.Lock()
				defer srv.mu.Unlock()
				if srv.sent != tc.wantSent {
					t.Errorf("requests sent: %d, want %d", srv.sent, tc.wantSent)
				}
				if tc.mode == stalls && (len(srv.ended) == 0 || srv.ended[len(srv.ended)-1] != tc.wantEnd) {
					t.Errorf("the stalled requests ended at %v, want the last at %v", srv.ended, tc.wantEnd)
				}
			})
		})
	}
}

// outcome names how a lookup ended, for TestBatchLookupsKeepTheirOwnCall.
func outcome(err error, own bool) string {
	var e *Error
	switch {
	case err == nil && own:
		return "record"
	case err == nil:
		return "another's record"
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline"
	case errors.As(err, &e) && e.StatusCode != 0:
		return "HTTP " + strconv.Itoa(e.StatusCode)
	}
	return err.Error()
}

// profileRequest is what TestBatchKeysAreExact's service saw of one batch.
type profileRequest struct {
	Auth     string
	UserIDs  []string
	Settings []string
}

// TestBatchKeysAreExact: a batch carries only lookups of one acting user
// and one list of settings, however their names are spelled: an acting
// user and settings whose names, joined, spell another's are two batches,
// each sent with its own user's token and its own settings.
func TestBatchKeysAreExact(t *testing.T) {
	type lookup struct {
		user, xuid string
		settings   []string
	}
	for _, tc := range []struct {
		name    string
		lookups []lookup
	}{
		{"settings that join alike", []lookup{
			{me, "2533274790000001", []string{"Gamertag", "Gamerscore"}},
			{me, "2533274790000002", []string{"Gamertag\x00Gamerscore"}},
		}},
		{"an acting user and settings that join alike", []lookup{
			{me, "2533274790000001", []string{"Gamertag", "Gamerscore"}},
			{me + "\x00Gamertag", "2533274790000002", []string{"Gamerscore"}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var mu sync.Mutex
				var seen []profileRequest
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					var in profileRequest
					if r.Method == http.MethodGet { // a batch of one goes alone: GET /users/xuid(X)/profile/settings?settings=A,B
						xuid, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/users/xuid("), ")")
						in.UserIDs, in.Settings = []string{xuid}, strings.Split(r.URL.Query().Get("settings"), ",")
					} else if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
						return nil, err
					}
					in.Auth = r.Header.Get("Authorization")
					mu.Lock()
					seen = append(seen, in)
					mu.Unlock()
					body := `{"profileUsers": [{"id": "` + in.UserIDs[0] + `", "settings": []}]}`
					return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Request: r,
						Body: io.NopCloser(strings.NewReader(body))}, nil
				})
				tokens := TokenFunc(func(_ context.Context, xuid string) (Token, error) {
					return Token{Authorization: "XBL3.0 x=" + strconv.Quote(xuid)}, nil
				})
				c, err := New(Config{TitleID: title, Tokens: tokens, Transport: base, BatchWindow: time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				var want []profileRequest
				var wg sync.WaitGroup
				for _, l := range tc.lookups {
					want = append(want, profileRequest{"XBL3.0 x=" + strconv.Quote(l.user), []string{l.xuid}, l.settings})
					wg.Go(func() {
						if p, err := c.As(l.user).GetProfile(context.Background(), l.xuid, l.settings); err != nil || p.XUID != l.xuid {
							t.Errorf("GetProfile(%q) as %q: %+v, %v", l.xuid, l.user, p, err)
						}
					})
					synctest.Wait() // the first opens its batch
				}
				wg.Wait()
				sort.Slice(seen, func(i, j int) bool { return seen[i].UserIDs[0] < seen[j].UserIDs[0] })
				if diff := cmp.Diff(want, seen); diff != "" {
					t.Errorf("batches sent (-want +got):\n%s", diff)
				}
			})
		})
	}
}
