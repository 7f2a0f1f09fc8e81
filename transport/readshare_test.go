package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

const readURL = "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag"

// readBase answers every GET after a delay with a body naming the token it
// was sent with (so a caller can tell whose answer it got), the headers of
// header, and 401 for a token in rejected. It counts the requests.
type readBase struct {
	delay    time.Duration
	header   http.Header
	rejected map[string]bool
	stall    bool // every answer's body stalls until the request's context ends, as net/http's does

	mu   sync.Mutex
	sent int
}

func (b *readBase) RoundTrip(req *http.Request) (*http.Response, error) {
	b.mu.Lock()
	b.sent++
	b.mu.Unlock()
	select {
	case <-time.After(b.delay):
	case <-req.Context().Done():
		return nil, context.Cause(req.Context())
	}
	tok := req.Header.Get("Authorization")
	resp := &http.Response{StatusCode: 200, Header: b.header.Clone(), Request: req, Body: io.NopCloser(strings.NewReader("answer for " + tok))}
	if resp.Header == nil {
		resp.Header = http.Header{}
	}
	if b.stall {
		resp.Body = io.NopCloser(stallBody{req.Context()})
	}
	if b.rejected[tok] {
		resp.StatusCode, resp.Body = 401, http.NoBody
	}
	return resp, nil
}

func (b *readBase) requests() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sent
}

// readAs is a GET of readURL whose headers are set by edit.
func readAs(ctx context.Context, rt http.RoundTripper, edit func(http.Header)) (string, error) {
	req, _ := http.NewRequestWithContext(ctx, "GET", readURL, nil)
	req.Header.Set("Authorization", "XBL3.0 x=1111;token-a")
	if edit != nil {
		edit(req.Header)
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return fmt.Sprintf("%d %s", resp.StatusCode, b), err
}

func token(tok string) func(http.Header) {
	return func(h http.Header) { h.Set("Authorization", tok) }
}

// TestReadsSharedOnlyWithTheSameCredentials: a read made while an
// identical one is under way shares its answer only when it carries the
// same credentials (the whole Authorization, Signature and Cookie) and the
// same policy; otherwise, and whenever the transport cannot read its
// credentials, it sends its own and gets its own answer.
func TestReadsSharedOnlyWithTheSameCredentials(t *testing.T) {
	same := func(h http.Header) {}
	for _, tc := range []struct {
		name        string
		first, then func(http.Header)
		ctx         func(context.Context) context.Context
		want        int // requests sent
	}{
		{"same token", same, same, nil, 1},
		{"same userhash, another token", same, token("XBL3.0 x=1111;token-b"), nil, 2},
		{"another Signature", func(h http.Header) { h.Set("Signature", "sig-1") }, func(h http.Header) { h.Set("Signature", "sig-2") }, nil, 2},
		{"another Cookie", func(h http.Header) { h.Set("Cookie", "a=1") }, func(h http.Header) { h.Set("Cookie", "a=2") }, nil, 2},
		{"no Authorization", func(h http.Header) { h.Del("Authorization") }, func(h http.Header) { h.Del("Authorization") }, nil, 2},
		{"not XBL3.0", token("Bearer abc"), token("Bearer abc"), nil, 2},
		{"Authorization twice", func(h http.Header) { h["authorization"] = []string{"XBL3.0 x=2222;other"} }, func(h http.Header) { h["authorization"] = []string{"XBL3.0 x=2222;other"} }, nil, 2},
		{"NoRetry joins no retrying call", same, same, func(ctx context.Context) context.Context { return WithPolicy(ctx, Policy{NoRetry: true}) }, 2},
		{"a long attempt timeout joins no short one", same, same, func(ctx context.Context) context.Context {
			return WithPolicy(ctx, Policy{AttemptTimeout: LongCallTimeout})
		}, 2},
		{"MaxWait joins no shorter wait", same, same, func(ctx context.Context) context.Context { return WithPolicy(ctx, Policy{MaxWait: time.Minute}) }, 2},
		{"Rule joins no other rule", same, same, func(ctx context.Context) context.Context { return WithPolicy(ctx, Policy{Rule: "presence"}) }, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := &readBase{delay: 100 * time.Millisecond}
				tr := &Transport{Base: base, TitleID: "1234567890", CoalesceReads: true}
				var first, then string
				var wg sync.WaitGroup
				wg.Go(func() { first, _ = readAs(context.Background(), tr, tc.first) })
				synctest.Wait()
				ctx := context.Background()
				if tc.ctx != nil {
					ctx = tc.ctx(ctx)
				}
				wg.Go(func() { then, _ = readAs(ctx, tr, tc.then) })
				wg.Wait()
				if got := base.requests(); got != tc.want {
					t.Errorf("%d requests sent, want %d", got, tc.want)
				}
				wantThen := "200 answer for " + headerOf(tc.then)
				if then != wantThen {
					t.Errorf("the second call got %q, want %q (its own credentials' answer)", then, wantThen)
				}
				if first != "200 answer for "+headerOf(tc.first) {
					t.Errorf("the first call got %q", first)
				}
			})
		})
	}
}

// headerOf is the Authorization value readAs sends after edit.
func headerOf(edit func(http.Header)) string {
	h := http.Header{}
	h.Set("Authorization", "XBL3.0 x=1111;token-a")
	edit(h)
	return h.Get("Authorization")
}

// TestReadCacheKeeps: the read cache answers a read made again within its
// TTL only with the same credentials, only what the service let it keep,
// and never an answer to a token renewed after a 401 to a caller of the
// rejected token.
func TestReadCacheKeeps(t *testing.T) {
	for _, tc := range []struct {
		name   string
		header http.Header
		then   func(http.Header)
		after  time.Duration
		want   int // requests sent, the second call's included
	}{
		{"same token", nil, nil, time.Second, 1},
		{"same userhash, another token", nil, token("XBL3.0 x=1111;token-b"), time.Second, 2},
		{"no-store", http.Header{"Cache-Control": {"no-store"}}, nil, time.Second, 2},
		{"no-cache", http.Header{"Cache-Control": {"max-age=60, No-Cache"}}, nil, time.Second, 2},
		{"Set-Cookie", http.Header{"Set-Cookie": {"s=1"}}, nil, time.Second, 2},
		{"private: the cache is the user's", http.Header{"Cache-Control": {"private"}}, nil, time.Second, 1},
		{"max-age shorter than the TTL", http.Header{"Cache-Control": {"max-age=1"}}, nil, 2 * time.Second, 2},
		{"no lifetime, Age 7: fresh 3 s more", http.Header{"Age": {"7"}}, nil, 2 * time.Second, 1},
		{"no lifetime, Age 7, 4 s later", http.Header{"Age": {"7"}}, nil, 4 * time.Second, 2},
		{"no lifetime, Age at MaxReadCacheTTL", http.Header{"Age": {"10"}}, nil, time.Second, 2},
		{"no lifetime, Age unreadable", http.Header{"Age": {"-1"}}, nil, time.Second, 2},
		{"varies on a header the key lacks", http.Header{"Vary": {"Accept, X-Device"}}, nil, time.Second, 2},
		{"varies on Accept", http.Header{"Vary": {"Accept"}}, nil, time.Second, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := &readBase{header: tc.header}
				tr := &Transport{Base: base, TitleID: "1234567890", CoalesceReads: true, ReadCacheTTL: 5 * time.Second}
				readAs(context.Background(), tr, nil)
				time.Sleep(tc.after)
				got, err := readAs(context.Background(), tr, tc.then)
				if err != nil {
					t.Fatal(err)
				}
				if want := "200 answer for " + headerOf(cmpOr(tc.then)); got != want {
					t.Errorf("the second call got %q, want %q", got, want)
				}
				if got := base.requests(); got != tc.want {
					t.Errorf("%d requests sent, want %d", got, tc.want)
				}
			})
		})
	}
	t.Run("renewed token", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			base := &readBase{rejected: map[string]bool{"XBL3.0 x=1111;token-a": true}}
			tr := &Transport{Base: base, TitleID: "1234567890", CoalesceReads: true, ReadCacheTTL: 5 * time.Second,
				RefreshToken: func(*http.Request) (string, error) { return "XBL3.0 x=1111;token-new", nil }}
			first, _ := readAs(context.Background(), tr, nil)
			tr.RefreshToken = nil // the next caller holds the rejected token and cannot renew it
			then, _ := readAs(context.Background(), tr, nil)
			if first != "200 answer for XBL3.0 x=1111;token-new" || then != "401 " {
				t.Errorf("the renewing call got %q, then a caller of the rejected token got %q; want the renewed answer, then 401", first, then)
			}
		})
	})
}

func cmpOr(edit func(http.Header)) func(http.Header) {
	if edit == nil {
		return func(http.Header) {}
	}
	return edit
}

// TestCoalescedReadsEnd: a leader whose answer's body stalls ends at its
// attempt timeout, and its followers with it; a follower ends at its own
// deadline; a read made after the stalled one has been under way for
// maxJoinAge sends its own request; and a follower of a leader whose base
// never returns gives up at its own bound (ErrSharedReadTimeout).
func TestCoalescedReadsEnd(t *testing.T) {
	t.Run("stalled body", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			base := &readBase{stall: true}
			tr := &Transport{Base: base, TitleID: "1234567890", CoalesceReads: true}
			start := time.Now()
			var wg sync.WaitGroup
			ends := make([]time.Duration, 3)
			errs := make([]error, 3)
			call := func(i int, ctx context.Context) {
				_, errs[i] = readAs(ctx, tr, nil)
				ends[i] = time.Since(start)
			}
			wg.Go(func() { call(0, context.Background()) })
			synctest.Wait()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			wg.Go(func() { call(1, ctx) })
			time.Sleep(maxJoinAge)
			wg.Go(func() { call(2, context.Background()) }) // a new flight: its own request
			wg.Wait()
			want := []time.Duration{DefaultRetryWindow, 3 * time.Second, maxJoinAge + DefaultRetryWindow}
			if diff := cmp.Diff(want, ends); diff != "" {
				t.Errorf("when each call ended (-want +got):\n%s", diff)
			}
			for i, err := range errs {
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("call %d: %v, want a deadline", i, err)
				}
			}
			if got := base.requests(); got != 2 {
				t.Errorf("%d requests, want 2", got)
			}
		})
	})
	t.Run("base that never returns", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			release := make(chan struct{})
			tr := &Transport{TitleID: "1234567890", CoalesceReads: true, Base: roundTripFunc(func(*http.Request) (*http.Response, error) {
				<-release // ignores its context
				return nil, errors.New("released")
			})}
			var wg sync.WaitGroup
			wg.Go(func() { readAs(context.Background(), tr, nil) })
			synctest.Wait()
			start := time.Now()
			_, err := readAs(context.Background(), tr, nil)
			if !errors.Is(err, ErrSharedReadTimeout) || time.Since(start) != tr.followBound(Policy{}) {
				t.Errorf("the follower got %v after %v, want ErrSharedReadTimeout after %v", err, time.Since(start), tr.followBound(Policy{}))
			}
			close(release)
			wg.Wait()
		})
	})
}

// stallBody is a body that never sends a byte; a read ends with its
// request's context.
type stallBody struct{ ctx context.Context }

func (b stallBody) Read([]byte) (int, error) {
	<-b.ctx.Done()
	return 0, context.Cause(b.ctx)
}

// TestReadCacheCountsHeaders: the read cache's byte bound counts each
// answer's headers, not only its body: answers of 1 MiB of headers and an
// empty body fill it after 64 of them, not 4,096.
func TestReadCacheCountsHeaders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		big := http.Header{"X-Big": {strings.Repeat("x", 1<<20)}}
		tr := &Transport{Base: &readBase{header: big}, TitleID: "1234567890", CoalesceReads: true, ReadCacheTTL: 10 * time.Second, DisableBudget: true}
		for i := range 100 {
			req, _ := http.NewRequest("GET", fmt.Sprintf("%s&n=%d", readURL, i), nil)
			req.Header.Set("Authorization", "XBL3.0 x=1111;token-a")
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		held := 0
		for k, s := range tr.reads.cache {
			held += k.size() + len(s.body) + headerBytes(s.resp.Header)
		}
		if held > maxCachedBytes || tr.reads.bytes != held {
			t.Errorf("the cache holds %d bytes (it counts %d), over its bound of %d", held, tr.reads.bytes, maxCachedBytes)
		}
		if n := len(tr.reads.cache); n < 32 || n > 64 {
			t.Errorf("the cache kept %d answers of 1 MiB of headers, want 32 to 64", n)
		}
	})
}
