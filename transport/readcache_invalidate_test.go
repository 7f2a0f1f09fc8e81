package transport

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// The read cache and writes (ReadCacheTTL's godoc; RFC 9111 §4.4: a cache
// invalidates the target URI of an unsafe request).

// invalidateBase answers every GET with 200 and the count of GETs of its
// URL so far, every other method with status (200 unless set), and holds
// the GETs of hold until it is closed.
type invalidateBase struct {
	mu     sync.Mutex
	gets   map[string]int
	status int
	err    error
	hold   string
	gate   chan struct{}
	held   chan struct{} // closed when a GET of hold arrives
}

func (b *invalidateBase) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		r.Body.Close()
	}
	if err := r.Context().Err(); err != nil { // as net/http's
		return nil, err
	}
	b.mu.Lock()
	status, err := b.status, b.err
	var n int
	if r.Method == http.MethodGet {
		if b.gets == nil {
			b.gets = map[string]int{}
		}
		b.gets[r.URL.String()]++
		n = b.gets[r.URL.String()]
	}
	hold := r.Method == http.MethodGet && b.hold != "" && r.URL.String() == b.hold
	b.mu.Unlock()
	if hold {
		close(b.held)
		<-b.gate
	}
	if r.Method != http.MethodGet {
		if err != nil {
			return nil, err
		}
		if status == 0 {
			status = 200
		}
		return &http.Response{StatusCode: status, Status: strconv.Itoa(status), Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	}
	return &http.Response{StatusCode: 200, Status: "200 OK", Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(strconv.Itoa(n))), Request: r}, nil
}

func invalidateTransport(b *invalidateBase) *Transport {
	return &Transport{Base: b, TitleID: "1234567890", CoalesceReads: true, ReadCacheTTL: MaxReadCacheTTL, DisableBudget: true}
}

// invalidateCall makes a call as user (a userhash) and returns the body.
func invalidateCall(t *testing.T, ctx context.Context, tr http.RoundTripper, method, url, user string) (string, error) {
	t.Helper()
	var body io.Reader
	if method != http.MethodGet {
		body = strings.NewReader(`{"a":1}`)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "XBL3.0 x="+user+";token-"+user)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

const invalidateURL = "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag"

func TestReadCacheWriteDropsItsURLForEveryUser(t *testing.T) {
	for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch, "MERGE"} {
		t.Run(method, func(t *testing.T) {
			b := &invalidateBase{}
			tr := invalidateTransport(b)
			ctx := context.Background()
			other := "https://profile.xboxlive.com/users/me/profile/settings?settings=GameDisplayPicRaw"
			for _, user := range []string{"1", "2"} {
				for range 2 {
					invalidateCall(t, ctx, tr, http.MethodGet, invalidateURL, user)
					invalidateCall(t, ctx, tr, http.MethodGet, other, user)
				}
			}
			if n := b.gets[invalidateURL]; n != 2 {
				t.Fatalf("before the write: %d GETs of the URL reached the service; want 2 (one a user, the second from the cache)", n)
			}
			if _, err := invalidateCall(t, ctx, tr, method, invalidateURL, "1"); err != nil {
				t.Fatal(err)
			}
			for _, user := range []string{"1", "2"} {
				got, err := invalidateCall(t, ctx, tr, http.MethodGet, invalidateURL, user)
				if err != nil {
					t.Fatal(err)
				}
				if want := strconv.Itoa(map[string]int{"1": 3, "2": 4}[user]); got != want {
					t.Errorf("user %s's read after user 1's %s: answer %q, want %q (from the service, not the cache)", user, method, got, want)
				}
			}
			if n := b.gets[other]; n != 2 {
				t.Errorf("another URL's reads: %d reached the service; want 2 (the write to another URL drops nothing of it)", n)
			}
			attack95Check(t, tr)
		})
	}
}

// A write before any read, and after the cache has emptied, finds nothing
// to drop.
func TestReadCacheWriteToAnEmptyCache(t *testing.T) {
	b := &invalidateBase{}
	tr := invalidateTransport(b)
	ctx := context.Background()
	if _, err := invalidateCall(t, ctx, tr, http.MethodPost, invalidateURL, "1"); err != nil {
		t.Fatal(err)
	}
	invalidateCall(t, ctx, tr, http.MethodGet, invalidateURL, "1")
	invalidateCall(t, ctx, tr, http.MethodPost, invalidateURL, "1")
	invalidateCall(t, ctx, tr, http.MethodPost, invalidateURL, "1")
	if got, _ := invalidateCall(t, ctx, tr, http.MethodGet, invalidateURL, "1"); got != "2" {
		t.Errorf("read after the writes: %q, want 2", got)
	}
	attack95Check(t, tr)
}

// A HEAD, OPTIONS or TRACE changes nothing: the cache keeps its answer.
func TestReadCacheSafeMethodsKeep(t *testing.T) {
	b := &invalidateBase{}
	tr := invalidateTransport(b)
	ctx := context.Background()
	invalidateCall(t, ctx, tr, http.MethodGet, invalidateURL, "1")
	for _, m := range []string{http.MethodHead, http.MethodOptions, http.MethodTrace} {
		invalidateCall(t, ctx, tr, m, invalidateURL, "1")
	}
	if got, _ := invalidateCall(t, ctx, tr, http.MethodGet, invalidateURL, "1"); got != "1" {
		t.Errorf("after HEAD, OPTIONS and TRACE: %q, want 1 (the cached answer)", got)
	}
}

// A write that failed may still have been applied: it drops the URL too.
func TestReadCacheFailedWriteDrops(t *testing.T) {
	for _, c := range []struct {
		name   string
		status int
		err    error
	}{{"400", 400, nil}, {"500", 500, nil}, {"error", 0, errors.New("connection reset")}} {
		t.Run(c.name, func(t *testing.T) {
			b := &invalidateBase{}
			tr := invalidateTransport(b)
			ctx := WithPolicy(context.Background(), Policy{NoRetry: true})
			invalidateCall(t, ctx, tr, http.MethodGet, invalidateURL, "1")
			b.status, b.err = c.status, c.err
			invalidateCall(t, ctx, tr, http.MethodPost, invalidateURL, "1")
			if got, _ := invalidateCall(t, ctx, tr, http.MethodGet, invalidateURL, "1"); got != "2" {
				t.Errorf("read after a write answered %s: %q, want 2 (from the service)", c.name, got)
			}
		})
	}
}

// A read under way when a write to its URL ends may have been answered
// before the write: its answer goes to its callers, and is not kept.
func TestReadCacheReadUnderWayDuringWriteNotKept(t *testing.T) {
	b := &invalidateBase{hold: invalidateURL, gate: make(chan struct{}), held: make(chan struct{})}
	tr := invalidateTransport(b)
	ctx := context.Background()
	done := make(chan string)
	go func() {
		got, err := invalidateCall(t, ctx, tr, http.MethodGet, invalidateURL, "1")
		if err != nil {
			t.Error(err)
		}
		done <- got
	}()
	<-b.held
	if _, err := invalidateCall(t, ctx, tr, http.MethodPut, invalidateURL, "1"); err != nil {
		t.Fatal(err)
	}
	b.mu.Lock()
	b.hold = ""
	b.mu.Unlock()
	close(b.gate)
	if got := <-done; got != "1" {
		t.Fatalf("the read under way: %q, want 1", got)
	}
	if got, _ := invalidateCall(t, ctx, tr, http.MethodGet, invalidateURL, "1"); got != "2" {
		t.Errorf("the read after: %q, want 2 (the answer read during the write is not kept)", got)
	}
	attack95Check(t, tr)
}

// A call whose context has ended fails as without the cache.
func TestReadCacheEndedContextNotAnswered(t *testing.T) {
	b := &invalidateBase{}
	tr := invalidateTransport(b)
	invalidateCall(t, context.Background(), tr, http.MethodGet, invalidateURL, "1")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	got, err := invalidateCall(t, ctx, tr, http.MethodGet, invalidateURL, "1")
	if !errors.Is(err, context.Canceled) {
		t.Errorf("a read under an ended context: %q, %v; want context.Canceled", got, err)
	}
}

// Writes and reads of a few URLs by many goroutines: the count by URL
// stays that of the entries and flights (attack95Check), and after every
// write has ended, a read of a URL written gets an answer sent after it.
func TestReadCacheWritesAndReadsRace(t *testing.T) {
	b := &invalidateBase{}
	tr := invalidateTransport(b)
	ctx := WithPolicy(context.Background(), Policy{NoRetry: true})
	var wrote atomic.Int64
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 200 {
				url := invalidateURL + "&k=" + strconv.Itoa((g+i)%5)
				method := http.MethodGet
				if (g+i)%7 == 0 {
					method = http.MethodPost
					wrote.Add(1)
				}
				if _, err := invalidateCall(t, ctx, tr, method, url, strconv.Itoa(1+g%3)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	attack95Check(t, tr)
	for k := range 5 {
		url := invalidateURL + "&k=" + strconv.Itoa(k)
		invalidateCall(t, ctx, tr, http.MethodPost, url, "1")
		b.mu.Lock()
		before := b.gets[url]
		b.mu.Unlock()
		got, _ := invalidateCall(t, ctx, tr, http.MethodGet, url, "2")
		if got != strconv.Itoa(before+1) {
			t.Errorf("%s read after the last write: %q, want %d", url, got, before+1)
		}
	}
	if wrote.Load() == 0 {
		t.Fatal("no write made")
	}
	attack95Check(t, tr)
	tr.reads.mu.Lock()
	defer tr.reads.mu.Unlock()
	if len(tr.reads.flights) != 0 {
		t.Errorf("%d flights left", len(tr.reads.flights))
	}
}

// A write to a URL nothing reads costs a map lookup, not a walk of the
// cache: 4,096 entries cached, the writes' time stays that of an empty
// cache's (BenchmarkReadCacheWrite).
// TestTargetOf checks the URL a read is keyed under and a write drops:
// the host as net/http dials it (the port read as a number, the scheme's
// default left out), and no target (a read sends its own, a write drops
// everything) where the transport cannot tell the resource.
func TestTargetOf(t *testing.T) {
	for _, c := range []struct {
		name, url, opaque, host string
		want                    target
		ok                      bool
	}{
		{name: "plain", url: "https://A.example/x?q=1", want: target{"https", "a.example", "a.example", "/x?q=1"}, ok: true},
		{name: "default port", url: "http://a.example:80/x", host: "a.example", want: target{"http", "a.example", "a.example", "/x"}, ok: true},
		{name: "default port with zeros", url: "https://a.example:000443/x", host: "a.example", want: target{"https", "a.example", "a.example", "/x"}, ok: true},
		{name: "other scheme's default", url: "http://a.example:443/x", want: target{"http", "a.example:443", "a.example:443", "/x"}, ok: true},
		{name: "port with a zero", url: "http://a.example:08080/x", want: target{"http", "a.example:8080", "a.example:08080", "/x"}, ok: true},
		{name: "port 0", url: "http://a.example:0/x", want: target{"http", "a.example:0", "a.example:0", "/x"}, ok: true},
		{name: "ipv6", url: "http://[::1]/x", want: target{"http", "[::1]", "[::1]", "/x"}, ok: true},
		{name: "ipv6 default port", url: "http://[::1]:080/x", host: "[::1]", want: target{"http", "[::1]", "[::1]", "/x"}, ok: true},
		{name: "empty path", url: "http://a.example", want: target{"http", "a.example", "a.example", "/"}, ok: true},
		{name: "port past 65535", url: "http://a.example:65536/x"},
		{name: "opaque absolute form", url: "http://a.example/x", opaque: "//a.example/x"},
		{name: "opaque origin form", url: "http://a.example/x", opaque: "/x"},
		{name: "host not ASCII", url: "http://bücher.example/x"},
		{name: "Host not ASCII", url: "http://a.example/x", host: "bücher.example"},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodGet, c.url, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.URL.Opaque, req.Host = c.opaque, c.host
			got, ok := targetOf(req)
			if got != c.want || ok != c.ok {
				t.Errorf("targetOf(%s, Opaque %q, Host %q) = %+v, %v; want %+v, %v", c.url, c.opaque, c.host, got, ok, c.want, c.ok)
			}
		})
	}
	// Ports http.NewRequest removes (empty) or url.Parse refuses, set by
	// hand: not read.
	for _, host := range []string{"a.example:", "a.example:8o", "a.example:+80", "[::1]:"} {
		req := &http.Request{URL: &url.URL{Scheme: "http", Host: host, Path: "/x"}}
		if got, ok := targetOf(req); ok {
			t.Errorf("targetOf(URL.Host %q) = %+v, true; want false", host, got)
		}
	}
}

// TestReadCacheWriteWithoutCacheEndsSharing checks that with CoalesceReads
// alone (ReadCacheTTL zero) a write ends the sharing of the reads of its
// URL under way too, and that a write to a URL the transport cannot spell
// (Opaque set) ends every read's: the read after it leads its own.
func TestReadCacheWriteWithoutCacheEndsSharing(t *testing.T) {
	const u = "https://profile.xboxlive.com/users/me/profile/settings"
	for _, c := range []struct{ name, write, opaque string }{
		{"same URL", u, ""},
		{"opaque elsewhere", "https://profile.xboxlive.com/elsewhere", "/elsewhere"},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				gate := make(chan struct{})
				s := &attack100Versioned{hold: map[int]chan struct{}{1: gate}}
				tr := attack100Transport(s)
				tr.ReadCacheTTL = 0
				ctx := WithPolicy(context.Background(), Policy{NoRetry: true})
				go attack100Call(ctx, tr, http.MethodGet, u, "", "1")
				synctest.Wait() // the first read is at the service
				w, err := http.NewRequestWithContext(ctx, http.MethodPost, c.write, strings.NewReader(`{"a":1}`))
				if err != nil {
					t.Fatal(err)
				}
				w.URL.Opaque = c.opaque
				w.Header.Set("Authorization", "XBL3.0 x=2;token-2")
				resp, err := tr.RoundTrip(w)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				after := make(chan string, 1)
				go func() {
					got, _ := attack100Call(ctx, tr, http.MethodGet, u, "", "1")
					after <- got
				}()
				synctest.Wait()
				select {
				case <-after:
				default:
					t.Errorf("the read after a write to %s waits for the read from before it", c.write)
				}
				close(gate)
				s.mu.Lock()
				defer s.mu.Unlock()
				if s.gets != 2 {
					t.Errorf("%d GETs reached the service; want 2", s.gets)
				}
			})
		})
	}
}

func BenchmarkReadCacheWrite(b *testing.B) {
	for _, n := range []int{0, maxCachedEntries} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			tr := invalidateTransport(&invalidateBase{})
			now := time.Now()
			for i := range n {
				tr.store(attack95Key(i), attack95Entry(attack95Key(i), []byte("{}"), now.Add(time.Hour)), now)
			}
			req, err := http.NewRequest(http.MethodPost, "https://profile.xboxlive.com/elsewhere", nil)
			if err != nil {
				b.Fatal(err)
			}
			u, known := targetOf(req)
			b.ReportAllocs()
			for b.Loop() {
				tr.reads.invalidate(u, known)
			}
		})
	}
}
