package transport

// Outside attack (helper attack100) on the read cache's invalidation on writes
// (56efe9a). The promise under attack, ReadCacheTTL's godoc:
//
//	"A write through the Transport (any method but GET, HEAD, OPTIONS and
//	TRACE), however it is answered, drops what the cache holds of its URL
//	(scheme, host, path and query), for every user, and the answers of the
//	reads of that URL under way when it ends are not kept (RFC 9111 §4.4).
//	A call whose context has already ended is not answered from it."
//
// and RELIABILITY.md, "The read cache and writes": "the cache counts its
// entries and flights by a hash of their URL, which keeps no string of any
// request's"; "A write to a URL nothing reads costs a lookup of its URL's
// hash".

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/internal/racebuild"
)

// attack100Versioned is a service that keeps one version per URL (per Host and
// request-target it is sent): a write increments it as it arrives, a read
// answers the version at its arrival. hold, when set, holds the reads it
// names (by their number, from 1) until release is closed: their answer is
// the version when they arrived, delivered late.
type attack100Versioned struct {
	mu      sync.Mutex
	version map[string]int
	gets    int
	hold    map[int]chan struct{}
	arrived chan int // each read's number, when set
}

func (s *attack100Versioned) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		r.Body.Close()
	}
	if err := r.Context().Err(); err != nil {
		return nil, err
	}
	host := r.Host
	if host == "" {
		host = r.URL.Host
	}
	k := r.URL.Scheme + "://" + host + r.URL.RequestURI()
	s.mu.Lock()
	if s.version == nil {
		s.version = map[string]int{}
	}
	if r.Method != http.MethodGet {
		s.version[k]++
		s.mu.Unlock()
		return &http.Response{StatusCode: 200, Status: "200 OK", Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	}
	s.gets++
	n, v := s.gets, s.version[k]
	gate := s.hold[n]
	arrived := s.arrived
	s.mu.Unlock()
	if arrived != nil {
		arrived <- n
	}
	if gate != nil {
		<-gate
	}
	return &http.Response{StatusCode: 200, Status: "200 OK", Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(strconv.Itoa(v))), Request: r}, nil
}

func attack100Transport(base http.RoundTripper) *Transport {
	return &Transport{Base: base, TitleID: "1234567890", CoalesceReads: true, ReadCacheTTL: MaxReadCacheTTL, DisableBudget: true}
}

// attack100Call makes a call as user with the request's Host set to host (""
// leaves it to the URL) and returns the body.
func attack100Call(ctx context.Context, tr http.RoundTripper, method, url, host, user string) (string, error) {
	var body io.Reader
	if method != http.MethodGet {
		body = strings.NewReader(`{"a":1}`)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return "", err
	}
	if host != "" {
		req.Host = host
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

// attack100Wire is a loopback server that keeps a version per Host and
// request-target, as attack100Versioned does, behind a net/http client whose
// every dial, whatever the address, reaches it: what a test sees of the
// wire is what net/http sent (the address dialled, the Host header and the
// request-target).
type attack100Wire struct {
	srv     *httptest.Server
	base    *http.Transport
	mu      sync.Mutex
	version map[string]int
	seen    []string // "METHOD dial-address Host request-target", in order
	dialled []string
}

func newAtkWire(t *testing.T) *attack100Wire {
	w := &attack100Wire{version: map[string]int{}}
	w.srv = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		k := r.Host + " " + r.RequestURI
		w.mu.Lock()
		w.seen = append(w.seen, r.Method+" "+k)
		if r.Method != http.MethodGet {
			w.version[k]++
			w.mu.Unlock()
			rw.WriteHeader(200)
			return
		}
		v := w.version[k]
		w.mu.Unlock()
		rw.Header().Set("Content-Type", "application/json")
		io.WriteString(rw, strconv.Itoa(v))
	}))
	addr := w.srv.Listener.Addr().String()
	w.base = &http.Transport{
		DisableKeepAlives: true, // every request dials: each one's address is seen
		DialContext: func(ctx context.Context, network, a string) (net.Conn, error) {
			w.mu.Lock()
			w.dialled = append(w.dialled, a)
			w.mu.Unlock()
			var d net.Dialer
			return d.DialContext(ctx, "tcp", addr) // loopback only
		},
	}
	t.Cleanup(func() { w.base.CloseIdleConnections(); w.srv.Close() })
	return w
}

func (w *attack100Wire) last(n int) ([]string, []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.seen[len(w.seen)-n:]...), append([]string(nil), w.dialled[len(w.dialled)-n:]...)
}

// attack100Spelling is one read spelling and one write spelling of a URL.
type attack100Spelling struct {
	name                string
	readURL, readHost   string
	writeURL, writeHost string
}

// attack100StaleAfterWrite reads through a transport over w (twice: the second
// from the cache), writes the other spelling, reads again, and returns the
// last read's answer, the version the service holds for what the read
// sends, and whether net/http sent the write and the read to the same
// address with the same Host and request-target.
func attack100StaleAfterWrite(t *testing.T, w *attack100Wire, c attack100Spelling) (got, want string, sameWire bool, wire []string) {
	t.Helper()
	tr := attack100Transport(w.base)
	tr.AllowInsecure = true // plain http to the loopback server, under names net/http dials there
	ctx := WithPolicy(context.Background(), Policy{NoRetry: true})
	for range 2 {
		if _, err := attack100Call(ctx, tr, http.MethodGet, c.readURL, c.readHost, "1"); err != nil {
			t.Fatalf("%s: read: %v", c.name, err)
		}
	}
	w.mu.Lock()
	if len(w.seen) != 1 {
		t.Fatalf("%s: the second read reached the service (%q): the cache kept nothing", c.name, w.seen)
	}
	w.mu.Unlock()
	if _, err := attack100Call(ctx, tr, http.MethodPost, c.writeURL, c.writeHost, "1"); err != nil {
		t.Fatalf("%s: write: %v", c.name, err)
	}
	seenW, dialW := w.last(1)
	got, err := attack100Call(ctx, tr, http.MethodGet, c.readURL, c.readHost, "1")
	if err != nil {
		t.Fatal(err)
	}
	// What the read sends, sent without the cache, shows what the service
	// holds for it (and its wire).
	plain := &Transport{Base: w.base, TitleID: "1234567890", DisableBudget: true, AllowInsecure: true}
	want, err = attack100Call(ctx, plain, http.MethodGet, c.readURL, c.readHost, "1")
	if err != nil {
		t.Fatal(err)
	}
	seenR, dialR := w.last(1)
	sameWire = strings.TrimPrefix(seenW[0], "POST ") == strings.TrimPrefix(seenR[0], "GET ") && dialW[0] == dialR[0]
	return got, want, sameWire, []string{seenW[0] + " dialled " + dialW[0], seenR[0] + " dialled " + dialR[0]}
}

// BREAK. Promise: "A write through the Transport ... drops what the cache
// holds of its URL (scheme, host, path and query), for every user". A
// write to an internationalized host spelt in Unicode ("bücher.example")
// and a read of it spelt as net/http sends it ("xn--bcher-kva.example"):
// net/http dials the same address and sends the same Host header and
// request-target for both (it converts the host to its ASCII form,
// idna.Lookup), so the service applies the write to the resource the read
// reads; the transport compares the write's lower-cased Unicode host with
// the read's ASCII one, drops nothing, and the read after the write is
// answered from the cache with the value before it. (readKeyOf refuses a
// read whose host is not ASCII, so the cache only ever holds the ASCII
// spelling; targetOf takes a write's as it comes.)
func TestAttack100InvalidateIDNHostWriteLeavesPunycodeRead(t *testing.T) {
	w := newAtkWire(t)
	got, want, same, wire := attack100StaleAfterWrite(t, w, attack100Spelling{name: "idn",
		readURL: "http://xn--bcher-kva.example/users/me/settings", writeURL: "http://bücher.example/users/me/settings"})
	t.Logf("wire: %q", wire)
	if !same {
		t.Fatalf("net/http sent the write and the read differently: %q", wire)
	}
	if got != want {
		t.Errorf("read after a write of the same resource (same wire: %q): answered %q from the cache, the service holds %q", wire, got, want)
	}
}

// BREAK. Same promise. A read of "http://a.example:80/x" whose Host is set
// to "a.example" (a caller that sets Host as net/http would send it), and a
// write of "http://a.example/x": net/http dials a.example:80 for both and
// sends "Host: a.example" and "/x" for both; the cache's target keeps the
// URL's host with its default port apart from the one without, so the
// write drops nothing and the read after it is answered from the cache.
func TestAttack100InvalidateDefaultPortSameWire(t *testing.T) {
	w := newAtkWire(t)
	got, want, same, wire := attack100StaleAfterWrite(t, w, attack100Spelling{name: "port",
		readURL: "http://a.example:80/users/me/settings", readHost: "a.example", writeURL: "http://a.example/users/me/settings"})
	t.Logf("wire: %q", wire)
	if !same {
		t.Fatalf("net/http sent the write and the read differently: %q", wire)
	}
	if got != want {
		t.Errorf("read after a write of the same resource (same wire: %q): answered %q from the cache, the service holds %q", wire, got, want)
	}
}

// held: spellings that differ only where the transport folds them (host
// case, a fragment, a user in the URL, a Host header equal to the URL's
// host, either written or read that way) reach the same resource, and the
// write drops the cached answer of each: the read after it gets the
// service's value.
func TestAttack100InvalidateFoldedSpellingsHeld(t *testing.T) {
	const u = "http://a.example/users/me/settings?s=1"
	for _, c := range []attack100Spelling{
		{name: "host case", readURL: u, writeURL: "http://A.EXAMPLE/users/me/settings?s=1"},
		{name: "host case read", readURL: "http://A.Example/users/me/settings?s=1", writeURL: u},
		{name: "fragment", readURL: u, writeURL: u + "#frag"},
		{name: "userinfo", readURL: u, writeURL: "http://someone:pw@a.example/users/me/settings?s=1"},
		{name: "Host header same", readURL: u, writeURL: u, writeHost: "a.example"},
		{name: "Host header case", readURL: u, readHost: "A.EXAMPLE", writeURL: u},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newAtkWire(t)
			got, want, _, wire := attack100StaleAfterWrite(t, w, c)
			if got != want {
				t.Errorf("%s: read after the write answered %q, the service holds %q (wire %q)", c.name, got, want, wire)
			}
		})
	}
}

// held (not a break): spellings the service sees apart (net/http sends a
// different Host or request-target, so a service may hold two resources):
// %2f and %2F, "?" and none, a trailing dot in the host, a default port in
// the URL without a Host set, a Host header other than the URL's. The test
// checks that the wire differs for each, and logs what the cache did.
func TestAttack100InvalidateWireDistinctSpellingsNotPromised(t *testing.T) {
	for _, c := range []attack100Spelling{
		{name: "%2f vs %2F", readURL: "http://a.example/a%2fb", writeURL: "http://a.example/a%2Fb"},
		{name: "? vs none", readURL: "http://a.example/x", writeURL: "http://a.example/x?"},
		{name: "trailing dot", readURL: "http://a.example/x", writeURL: "http://a.example./x"},
		{name: ":80 vs none", readURL: "http://a.example/x", writeURL: "http://a.example:80/x"},
		{name: "Host header other", readURL: "http://b.example/x", writeURL: "http://a.example/x", writeHost: "b.example"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newAtkWire(t)
			got, want, same, wire := attack100StaleAfterWrite(t, w, c)
			if same {
				t.Errorf("%s: net/http sent both the same (%q): the spelling is one resource", c.name, wire)
			}
			t.Logf("%s: wire %q; read after the write %q, the service holds %q", c.name, wire, got, want)
		})
	}
}

// BREAK. Promise: "the answers of the reads of that URL under way when it
// ends are not kept". A read under way longer than maxJoinAge is replaced
// in the flights by a newer identical read (join: "replaces a stale one,
// whose followers keep waiting for it"); invalidate marks only the flights
// the map holds, so the first read, still under way when the write ends,
// is not marked, and its answer (the value before the write) is kept when
// it lands: the read after the write is answered from the cache with it.
func TestAttack100InvalidateReplacedFlightKeptAfterWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		s := &attack100Versioned{hold: map[int]chan struct{}{1: gate}}
		tr := attack100Transport(s)
		ctx := WithPolicy(context.Background(), Policy{NoRetry: true, AttemptTimeout: time.Minute})
		const u = "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag"
		first := make(chan string, 1)
		go func() {
			got, err := attack100Call(ctx, tr, http.MethodGet, u, "", "1")
			if err != nil {
				t.Error(err)
			}
			first <- got
		}()
		synctest.Wait() // the first read's request is at the service, held
		time.Sleep(maxJoinAge + time.Second)
		if got, err := attack100Call(ctx, tr, http.MethodGet, u, "", "1"); err != nil || got != "0" {
			t.Fatalf("the second read (its own flight, the first one replaced): %q, %v", got, err)
		}
		if _, err := attack100Call(ctx, tr, http.MethodPost, u, "", "1"); err != nil {
			t.Fatal(err)
		}
		close(gate) // the first read lands after the write, with the value before it
		if got := <-first; got != "0" {
			t.Fatalf("the first read: %q, want 0", got)
		}
		attack95Check(t, tr)
		got, err := attack100Call(ctx, tr, http.MethodGet, u, "", "1")
		if err != nil {
			t.Fatal(err)
		}
		if got != "1" {
			t.Errorf("read after the write (the write's RoundTrip returned before it started): %q, want 1; the answer of a read under way when the write ended (replaced in the flights after %v) was kept", got, maxJoinAge)
		}
	})
}

// BREAK (of the promise's purpose; RFC 9111 §4.4). Promise: "the answers
// of the reads of that URL under way when it ends are not kept". A flight
// under way when a write ends is marked, but stays in the flights and
// keeps taking callers for maxJoinAge: a read that starts after the
// write's RoundTrip has returned joins it and is answered with the value
// the service read before the write: the answer of the read under way is
// kept for the reads that come after the write, just not in the cache.
func TestAttack100InvalidateReadJoinsWrittenFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		s := &attack100Versioned{hold: map[int]chan struct{}{1: gate}}
		tr := attack100Transport(s)
		ctx := WithPolicy(context.Background(), Policy{NoRetry: true})
		const u = "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag"
		go attack100Call(ctx, tr, http.MethodGet, u, "", "1")
		synctest.Wait() // the read under way: at the service, which read version 0
		if _, err := attack100Call(ctx, tr, http.MethodPost, u, "", "1"); err != nil {
			t.Fatal(err)
		}
		// The write has returned: the service holds version 1.
		time.Sleep(time.Second)
		after := make(chan string, 1)
		go func() {
			got, err := attack100Call(ctx, tr, http.MethodGet, u, "", "1")
			if err != nil {
				t.Error(err)
			}
			after <- got
		}()
		synctest.Wait()
		close(gate)
		got := <-after
		s.mu.Lock()
		gets := s.gets
		s.mu.Unlock()
		if got != "1" {
			t.Errorf("read started 1 s after the write returned: answered %q (the answer of the read under way when the write ended; %d GET(s) reached the service), want 1", got, gets)
		}
		attack95Check(t, tr)
	})
}

// held: a write that panics in the base or in its Signer, whose body's
// GetBody fails on a retry, that its caller cancels mid-flight, or that
// the base answers 503 and the transport gives up on, drops the cached
// answer: the read after it is sent.
func TestAttack100InvalidateWriteEndsBadlyHeld(t *testing.T) {
	const u = "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag"
	for _, mode := range []string{"base panics", "signer panics", "getbody fails", "cancelled mid-flight", "503 no retry", "ended ctx"} {
		t.Run(mode, func(t *testing.T) {
			var gets, posts atomic.Int64
			arrived := make(chan struct{}, 16)
			base := attack95RT(func(r *http.Request) (*http.Response, error) {
				if r.Method == http.MethodGet {
					n := gets.Add(1)
					return &http.Response{StatusCode: 200, Status: "200 OK", Header: http.Header{}, Body: io.NopCloser(strings.NewReader(strconv.Itoa(int(n)))), Request: r}, nil
				}
				posts.Add(1)
				if r.Body != nil {
					io.Copy(io.Discard, r.Body)
				}
				switch mode {
				case "base panics":
					panic("attack100: the base panics on a write")
				case "getbody fails", "503 no retry":
					return &http.Response{StatusCode: 503, Status: "503", Header: http.Header{"Retry-After": {"0"}}, Body: http.NoBody, Request: r}, nil
				case "cancelled mid-flight":
					arrived <- struct{}{}
					<-r.Context().Done()
					return nil, r.Context().Err()
				}
				return &http.Response{StatusCode: 200, Status: "200 OK", Header: http.Header{}, Body: http.NoBody, Request: r}, nil
			})
			tr := attack100Transport(base)
			ctx := context.Background()
			if got, _ := attack100Call(ctx, tr, http.MethodGet, u, "", "1"); got != "1" {
				t.Fatalf("first read %q", got)
			}
			wctx := ctx
			var cancel context.CancelFunc
			switch mode {
			case "signer panics":
				wctx = WithSigner(ctx, func(*http.Request) error { panic("attack100: the signer panics") })
			case "503 no retry":
				wctx = WithPolicy(ctx, Policy{NoRetry: true})
			case "cancelled mid-flight":
				wctx, cancel = context.WithCancel(ctx)
				go func() { <-arrived; cancel() }()
			case "ended ctx":
				wctx, cancel = context.WithCancel(ctx)
				cancel()
			}
			func() {
				defer func() { recover() }()
				req, _ := http.NewRequestWithContext(wctx, http.MethodPost, u, strings.NewReader("{}"))
				req.Header.Set("Authorization", "XBL3.0 x=1;token-1")
				if mode == "getbody fails" {
					req.GetBody = func() (io.ReadCloser, error) { return nil, errors.New("attack100: GetBody fails") }
				}
				resp, err := tr.RoundTrip(req)
				if err == nil {
					resp.Body.Close()
				}
			}()
			if got, _ := attack100Call(ctx, tr, http.MethodGet, u, "", "1"); got != "2" {
				t.Errorf("%s: the read after the write: %q, want 2 (from the service; %d posts)", mode, got, posts.Load())
			}
			attack95Check(t, tr)
		})
	}
}

// held: a read led by a call whose leader was cancelled (the follower,
// orphaned, leads a new flight), under way when a write ends: its answer
// goes to its caller and is not kept; the read after the write gets the
// service's value. The same for a follower that joined before the write.
func TestAttack100InvalidateOrphanedAndFollowerHeld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		s := &attack100Versioned{hold: map[int]chan struct{}{2: gate}}
		blockFirst := make(chan struct{})
		var n atomic.Int64
		base := attack95RT(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodGet && n.Add(1) == 1 {
				select { // the first read: held until its caller gives up
				case <-r.Context().Done():
					return nil, r.Context().Err()
				case <-blockFirst:
				}
			}
			return s.RoundTrip(r)
		})
		tr := attack100Transport(base)
		ctx := WithPolicy(context.Background(), Policy{NoRetry: true})
		const u = "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag"
		lctx, cancel := context.WithCancel(ctx)
		go attack100Call(lctx, tr, http.MethodGet, u, "", "1")
		synctest.Wait()
		res := make(chan string, 2)
		for range 2 {
			go func() {
				got, _ := attack100Call(ctx, tr, http.MethodGet, u, "", "1")
				res <- got
			}()
		}
		synctest.Wait() // two followers
		cancel()
		synctest.Wait() // an orphaned follower leads; its read is at the service, held
		if _, err := attack100Call(ctx, tr, http.MethodPost, u, "", "1"); err != nil {
			t.Fatal(err)
		}
		close(gate)
		<-res
		<-res
		if got, _ := attack100Call(ctx, tr, http.MethodGet, u, "", "1"); got != "1" {
			t.Errorf("read after the write: %q, want 1", got)
		}
		attack95Check(t, tr)
		close(blockFirst)
	})
}

type attack100ObsKey struct{}

// held or BREAK, under -race: 24 goroutines read and write 4 URLs through
// one transport whose service answers after a little while (so reads share
// flights and the cache); each read records the highest version a write
// had set, by its RoundTrip's return, before the read started. A read
// answered from the cache (EventCoalesced "cache") with an older version
// breaks "drops what the cache holds of its URL"; one answered by joining
// a flight (EventCoalesced "shared") is the break of
// TestAttack100InvalidateReadJoinsWrittenFlight, counted and logged. After all
// calls end, the count by URL is the cache's entries alone.
func TestAttack100InvalidateRaceNoStaleFromCache(t *testing.T) {
	const urls = 4
	var written [urls]atomic.Int64 // highest version a returned write set
	var mu sync.Mutex
	version := [urls]int64{}
	base := attack95RT(func(r *http.Request) (*http.Response, error) {
		if r.Body != nil {
			io.Copy(io.Discard, r.Body)
			r.Body.Close()
		}
		k, _ := strconv.Atoi(r.URL.Query().Get("k"))
		mu.Lock()
		if r.Method != http.MethodGet {
			version[k]++
			v := version[k]
			mu.Unlock()
			return &http.Response{StatusCode: 200, Status: "200 OK", Header: http.Header{"X-V": {strconv.FormatInt(v, 10)}}, Body: http.NoBody, Request: r}, nil
		}
		v := version[k]
		mu.Unlock()
		time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond)
		return &http.Response{StatusCode: 200, Status: "200 OK", Header: http.Header{}, Body: io.NopCloser(strings.NewReader(strconv.FormatInt(v, 10))), Request: r}, nil
	})
	tr := attack100Transport(base)
	tr.Observe = func(ctx context.Context, e Event) {
		if p, ok := ctx.Value(attack100ObsKey{}).(*string); ok && e.Kind == EventCoalesced {
			*p = e.Reason
		}
	}
	var staleCache, staleShared, staleLed, reads atomic.Int64
	var wg sync.WaitGroup
	const rounds = 300
	for g := range 24 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 229))
			for range rounds {
				k := r.IntN(urls)
				u := "https://profile.xboxlive.com/users/me/settings?k=" + strconv.Itoa(k)
				user := strconv.Itoa(1 + r.IntN(3))
				if r.IntN(6) == 0 {
					req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader("{}"))
					req.Header.Set("Authorization", "XBL3.0 x="+user+";t")
					resp, err := tr.RoundTrip(req)
					if err != nil {
						t.Error(err)
						return
					}
					resp.Body.Close()
					v, _ := strconv.ParseInt(resp.Header.Get("X-V"), 10, 64)
					for {
						old := written[k].Load()
						if v <= old || written[k].CompareAndSwap(old, v) {
							break
						}
					}
					continue
				}
				floor := written[k].Load()
				var how string
				ctx := context.WithValue(context.Background(), attack100ObsKey{}, &how)
				got, err := attack100Call(ctx, tr, http.MethodGet, u, "", user)
				if err != nil {
					t.Error(err)
					return
				}
				reads.Add(1)
				v, _ := strconv.ParseInt(got, 10, 64)
				if v < floor {
					switch how {
					case "cache":
						staleCache.Add(1)
					case "shared":
						staleShared.Add(1)
					default:
						staleLed.Add(1)
					}
				}
			}
		})
	}
	wg.Wait()
	t.Logf("%d reads: %d stale from the cache, %d stale from a flight joined after the write, %d stale and led", reads.Load(), staleCache.Load(), staleShared.Load(), staleLed.Load())
	if staleCache.Load()+staleLed.Load()+staleShared.Load() > 0 {
		t.Errorf("%d reads started after a write had returned were answered from the cache with a version before it (%d led)", staleCache.Load(), staleLed.Load())
	}
	attack95Check(t, tr)
	tr.reads.mu.Lock()
	defer tr.reads.mu.Unlock()
	if len(tr.reads.flights) != 0 || len(tr.reads.targets) > len(tr.reads.cache) {
		t.Errorf("after every call: %d flights, %d URL counts for %d entries", len(tr.reads.flights), len(tr.reads.targets), len(tr.reads.cache))
	}
}

// attack100Key is a cache key of user u for URL path p.
func attack100Key(p string, u int) readKey {
	k := readKey{title: "1234567890", scheme: "https", urlHost: "profile.xboxlive.com", host: "profile.xboxlive.com", uri: p}
	k.cred = sha256.Sum256([]byte(strconv.Itoa(u)))
	return k
}

// held: (2) the count by URL equals the entries and flights (attack95Check)
// after each of: 5,000 stores of distinct URLs (eviction by count, then
// compaction), 100 answers of 1 MiB (eviction by bytes), replacements of
// one key, entries that expire (found by cached and by a store's heap),
// invalidations of URLs held by several users, a store too large to keep
// replacing an entry, and through RoundTrip flights that land with errors,
// with 500s, with a panic in the base while leading, and flights replaced
// after maxJoinAge; once every call has ended, it holds exactly the cache's
// entries.
func TestAttack100InvalidateTargetsAccounting(t *testing.T) {
	tr := attack100Transport(&attack100Versioned{})
	now := time.Now()
	for i := range 5000 {
		k := attack100Key("/k/"+strconv.Itoa(i%4500), i%3)
		tr.store(k, attack95Entry(k, []byte("{}"), now.Add(time.Hour)), now)
	}
	attack95Check(t, tr)
	big := make([]byte, 1<<20)
	for i := range 100 {
		k := attack100Key("/big/"+strconv.Itoa(i%70), 1)
		tr.store(k, attack95Entry(k, big, now.Add(time.Hour)), now)
	}
	attack95Check(t, tr)
	for i := range 50 {
		k := attack100Key("/same", 1)
		tr.store(k, attack95Entry(k, []byte(strconv.Itoa(i)), now.Add(time.Duration(i+1)*time.Millisecond)), now)
	}
	attack95Check(t, tr)
	later := now.Add(2 * time.Hour)
	for i := range 40 {
		tr.cached(attack100Key("/big/"+strconv.Itoa(i), 1), later)
	}
	k := attack100Key("/fresh", 1)
	tr.store(k, attack95Entry(k, []byte("{}"), later.Add(time.Hour)), later) // every other entry has expired
	attack95Check(t, tr)
	for u := range 5 {
		k := attack100Key("/users", u)
		tr.store(k, attack95Entry(k, []byte("{}"), later.Add(time.Hour)), later)
	}
	tr.reads.invalidate(attack100Key("/users", 0).target(), true)
	tr.reads.invalidate(attack100Key("/nothing", 0).target(), true)
	attack95Check(t, tr)
	huge := make([]byte, maxCachedBytes+1)
	tr.store(k, attack95Entry(k, huge, later.Add(time.Hour)), later) // drops the old, keeps nothing
	attack95Check(t, tr)
	tr.reads.mu.Lock()
	if _, ok := tr.reads.cache[k]; ok {
		t.Error("an entry too large was kept")
	}
	tr.reads.mu.Unlock()

	// Flights through RoundTrip: errors, 500s, panics, replacements.
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		var n atomic.Int64
		base := attack95RT(func(r *http.Request) (*http.Response, error) {
			switch i := n.Add(1); {
			case r.URL.Path == "/panic":
				panic("attack100: the base panics while leading")
			case r.URL.Path == "/err":
				return nil, errors.New("attack100: connection reset")
			case r.URL.Path == "/500":
				return &http.Response{StatusCode: 500, Status: "500", Header: http.Header{}, Body: http.NoBody, Request: r}, nil
			case r.URL.Path == "/slow" && i < 3:
				<-gate
			}
			return &http.Response{StatusCode: 200, Status: "200 OK", Header: http.Header{}, Body: io.NopCloser(strings.NewReader("x")), Request: r}, nil
		})
		tr := attack100Transport(base)
		ctx := WithPolicy(context.Background(), Policy{NoRetry: true, AttemptTimeout: time.Minute})
		var wg sync.WaitGroup
		for _, p := range []string{"/panic", "/err", "/500"} {
			for range 3 {
				wg.Go(func() {
					defer func() { recover() }()
					attack100Call(ctx, tr, http.MethodGet, "https://profile.xboxlive.com"+p, "", "1")
				})
			}
		}
		wg.Wait()
		attack95Check(t, tr)
		wg.Go(func() { attack100Call(ctx, tr, http.MethodGet, "https://profile.xboxlive.com/slow", "", "1") })
		synctest.Wait()
		time.Sleep(maxJoinAge + time.Second)
		wg.Go(func() { attack100Call(ctx, tr, http.MethodGet, "https://profile.xboxlive.com/slow", "", "1") })
		synctest.Wait()
		attack95Check(t, tr) // the replaced flight is not counted, the new one once
		attack100Call(ctx, tr, http.MethodPost, "https://profile.xboxlive.com/slow", "", "1")
		close(gate)
		wg.Wait()
		attack95Check(t, tr)
		tr.reads.mu.Lock()
		defer tr.reads.mu.Unlock()
		if len(tr.reads.flights) != 0 {
			t.Errorf("%d flights after every call ended", len(tr.reads.flights))
		}
		sum := 0
		for _, c := range tr.reads.targets {
			sum += c
		}
		if sum != len(tr.reads.cache) {
			t.Errorf("after every call: the count by URL sums to %d, the cache holds %d entries", sum, len(tr.reads.cache))
		}
	})
	attack95Check(t, tr)
}

// held: (3) a write to a URL the cache holds for 4,096 users (the cache
// full of it) drops all 4,096 in bounded time (the best of ten); a write to a URL a flight
// reads while the cache is full of other URLs walks the cache (O(entries),
// the bound the brief sets); 1,000,000 writes to distinct URLs no read
// holds add nothing to the count by URL nor to the heap.
func TestAttack100InvalidateCost(t *testing.T) {
	racebuild.Skip(t, "volume test: 1,000,000 writes, 6 s under the detector")
	tr := attack100Transport(&attack100Versioned{})
	now := time.Now()
	const p = "/users/me/profile/settings"
	var worst, total time.Duration
	best := time.Hour
	for round := range 10 {
		for u := range maxCachedEntries {
			k := attack100Key(p, u)
			tr.store(k, attack95Entry(k, []byte("{}"), now.Add(time.Hour)), now)
		}
		if round == 0 {
			attack95Check(t, tr)
		}
		start := time.Now()
		tr.reads.invalidate(attack100Key(p, 0).target(), true)
		d := time.Since(start)
		worst, best, total = max(worst, d), min(best, d), total+d
		tr.reads.mu.Lock()
		left := len(tr.reads.cache)
		tr.reads.mu.Unlock()
		if left != 0 {
			t.Fatalf("after the write, %d entries of the URL left", left)
		}
	}
	t.Logf("a write dropping 4,096 entries of one URL (4,096 users): best %v, worst %v, mean %v", best, worst, total/10)
	// The best of ten: the worst is the machine's (CI runs this beside the
	// fuzzing: 50.5 ms worst for a 12.4 ms mean, 2026-12-07).
	if best > 50*time.Millisecond {
		t.Errorf("a write dropping 4,096 entries took %v at best of ten", best)
	}
	attack95Check(t, tr)

	// A flight of URL X under way, the cache full of other URLs: every
	// write of X walks the cache.
	for i := range maxCachedEntries {
		k := attack100Key("/other/"+strconv.Itoa(i), 1)
		tr.store(k, attack95Entry(k, []byte("{}"), now.Add(time.Hour)), now)
	}
	x := attack100Key("/x", 1)
	tr.reads.mu.Lock()
	if tr.reads.flights == nil {
		tr.reads.flights = map[readKey]*flight{}
	}
	tr.reads.flights[x] = &flight{start: now, done: make(chan struct{})}
	tr.reads.target(x.target())
	tr.reads.mu.Unlock()
	const writes = 2000
	start := time.Now()
	for range writes {
		tr.reads.invalidate(x.target(), true)
	}
	per := time.Since(start) / writes
	t.Logf("a write of a URL a flight reads, 4,096 other entries cached: %v a write", per)
	if per > 2*time.Millisecond {
		t.Errorf("a write walking 4,096 entries took %v", per)
	}
	tr.reads.mu.Lock()
	delete(tr.reads.flights, x)
	tr.reads.untarget(x.target())
	nTargets := len(tr.reads.targets)
	tr.reads.mu.Unlock()
	attack95Check(t, tr)

	// 1,000,000 writes to distinct URLs: no growth.
	const n = 1_000_000
	before := attack100Heap()
	req, _ := http.NewRequest(http.MethodPost, "https://profile.xboxlive.com/", nil)
	start = time.Now()
	for i := range n {
		req.URL.Path = "/w/" + strconv.Itoa(i)
		tr.reads.invalidate(targetOf(req))
	}
	per = time.Since(start) / time.Duration(n)
	after := attack100Heap()
	tr.reads.mu.Lock()
	if len(tr.reads.targets) != nTargets {
		t.Errorf("after %d writes to distinct URLs: %d URL counts, %d before", n, len(tr.reads.targets), nTargets)
	}
	tr.reads.mu.Unlock()
	t.Logf("%d writes to distinct URLs: %v a write (targetOf included), heap %+d bytes", n, per, after-before)
	if after-before > 1<<20 {
		t.Errorf("heap grew by %d bytes over %d writes to distinct URLs", after-before, n)
	}
	// The same through RoundTrip, 100,000 writes.
	tr2 := attack100Transport(attack95RT(func(r *http.Request) (*http.Response, error) {
		if r.Method == http.MethodGet {
			return &http.Response{StatusCode: 200, Status: "200 OK", Header: http.Header{}, Body: io.NopCloser(strings.NewReader("{}")), Request: r}, nil
		}
		return &http.Response{StatusCode: 204, Status: "204", Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	}))
	attack100Call(context.Background(), tr2, http.MethodGet, "https://profile.xboxlive.com/read", "", "1")
	before = attack100Heap()
	for i := range 100_000 {
		r, _ := http.NewRequest(http.MethodDelete, "https://profile.xboxlive.com/w/"+strconv.Itoa(i), nil)
		r.Header.Set("Authorization", "XBL3.0 x=1;t")
		resp, err := tr2.RoundTrip(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	after = attack100Heap()
	tr2.reads.mu.Lock()
	if len(tr2.reads.targets) != 1 {
		t.Errorf("after 100,000 writes through RoundTrip: %d URL counts, want 1 (the one entry)", len(tr2.reads.targets))
	}
	tr2.reads.mu.Unlock()
	t.Logf("100,000 writes through RoundTrip: heap %+d bytes", after-before)
	if after-before > 4<<20 {
		t.Errorf("heap grew by %d bytes over 100,000 writes through RoundTrip", after-before)
	}
}

// held: (3) 1,000,000 distinct URLs (300,000 under -race) pass through the
// cache (each stored, evicted by the next 4,096): the count by URL never
// holds more than the entries, and the heap stays where it was after the
// first 4,096.
func TestAttack100InvalidateTargetsChurnBounded(t *testing.T) {
	racebuild.Skip(t, "volume test: 1,000,000 stores, 6 s under the detector")
	tr := &Transport{}
	now := time.Now()
	const n = 1_000_000
	var base int64
	for i := range n {
		k := attack100Key("/churn/"+strconv.Itoa(i), 1)
		tr.store(k, attack95Entry(k, nil, now.Add(time.Hour)), now)
		if i == 2*maxCachedEntries {
			base = attack100Heap()
		}
		if i%100_000 == 0 {
			tr.reads.mu.Lock()
			if len(tr.reads.targets) != len(tr.reads.cache) {
				t.Errorf("at %d: %d URL counts, %d entries", i, len(tr.reads.targets), len(tr.reads.cache))
			}
			tr.reads.mu.Unlock()
		}
	}
	end := attack100Heap()
	t.Logf("%d URLs through the cache: heap %+d bytes after the first %d", n, end-base, 2*maxCachedEntries)
	if end-base > 4<<20 {
		t.Errorf("heap grew by %d bytes while %d URLs passed through a full cache", end-base, n)
	}
	attack95Check(t, tr)
}

func attack100Heap() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// held: (4) nothing of a request's URL outlives its entry or flight: 24
// reads of URLs with a 1 MiB query each, cached, then dropped by writes;
// 24 more held under way while writes to them end, then landed (not kept):
// the heap returns to where it was, and the count by URL is empty.
func TestAttack100InvalidateLongURLsNotKeptAlive(t *testing.T) {
	const n = 24
	long := func(i int) string {
		return "https://profile.xboxlive.com/users/me?q=" + strings.Repeat(fmt.Sprintf("%c", 'a'+i%26), 1<<20) + strconv.Itoa(i)
	}
	gate := make(chan struct{})
	var holding atomic.Bool
	arrived := make(chan struct{}, n)
	tr := attack100Transport(attack95RT(func(r *http.Request) (*http.Response, error) {
		if r.Method == http.MethodGet && holding.Load() {
			arrived <- struct{}{}
			<-gate
		}
		return &http.Response{StatusCode: 200, Status: "200 OK", Header: http.Header{}, Body: io.NopCloser(strings.NewReader("{}")), Request: r}, nil
	}))
	ctx := WithPolicy(context.Background(), Policy{NoRetry: true})
	before := attack100Heap()
	for i := range n {
		attack100Call(ctx, tr, http.MethodGet, long(i), "", "1")
	}
	cached := attack100Heap()
	for i := range n {
		attack100Call(ctx, tr, http.MethodPut, long(i), "", "2")
	}
	dropped := attack100Heap()
	holding.Store(true)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { attack100Call(ctx, tr, http.MethodGet, long(n+i), "", "1") })
	}
	for range n {
		<-arrived
	}
	for i := range n {
		attack100Call(ctx, tr, http.MethodPatch, long(n+i), "", "2")
	}
	close(gate)
	wg.Wait()
	landed := attack100Heap()
	t.Logf("heap: %d before, %+d cached, %+d after the writes, %+d after the flights landed", before, cached-before, dropped-before, landed-before)
	if cached-before < n<<20 {
		t.Logf("the cache held less than the URLs (%d bytes)", cached-before)
	}
	if dropped-before > 2<<20 || landed-before > 2<<20 {
		t.Errorf("the URLs outlived their entries or flights: heap %+d after the writes, %+d after the flights landed", dropped-before, landed-before)
	}
	tr.reads.mu.Lock()
	defer tr.reads.mu.Unlock()
	if len(tr.reads.targets) != 0 || len(tr.reads.cache) != 0 || len(tr.reads.flights) != 0 {
		t.Errorf("left: %d URL counts, %d entries, %d flights", len(tr.reads.targets), len(tr.reads.cache), len(tr.reads.flights))
	}
	runtime.KeepAlive(tr)
}
