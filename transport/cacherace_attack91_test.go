package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// The promise these tests check, ReadCacheTTL's godoc: "The cache holds at
// most 4,096 answers and 64 MiB, counting the memory of bodies, headers,
// status lines and keys", and coalescer.bytes' comment: "what the cache
// holds: its entries' sizes". The count is the package's own (t.reads):
// each check recomputes it from what the cache holds.

type attack91iRT func(*http.Request) (*http.Response, error)

func (f attack91iRT) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// attack91Counts compares the cache's counts with what it holds: bytes the
// sizes of its entries, each with one reference in order, and stale the
// number of places of entries replaced or dropped (nil), within 4,096
// entries and 64 MiB. refs counts order's places, nil ones included.
func attack91Counts(t *testing.T, tr *Transport) (entries, refs int) {
	t.Helper()
	c := &tr.reads
	c.mu.Lock()
	defer c.mu.Unlock()
	want, stale := 0, 0
	for _, s := range c.cache {
		want += s.size
	}
	live := map[*shared]bool{}
	for i, s := range c.order {
		switch {
		case s == nil:
			stale++
		case s.ref != i || c.cache[s.key] != s || live[s]:
			t.Errorf("order: the reference at %d to %.40q is not the one to an entry of the map", i, s.key.uri)
		default:
			live[s] = true
		}
	}
	if len(live) != len(c.cache) {
		t.Errorf("%d entries, %d of them with a reference in order", len(c.cache), len(live))
	}
	if c.bytes != want || c.stale != stale {
		t.Errorf("the cache counts %d bytes and %d stale references; it holds %d bytes and %d stale references", c.bytes, c.stale, want, stale)
	}
	if c.bytes < 0 || c.bytes > maxCachedBytes || len(c.cache) > maxCachedEntries {
		t.Errorf("the cache counts %d bytes, %d entries: out of its bounds", c.bytes, len(c.cache))
	}
	return len(c.cache), len(c.order)
}

// attack91Read makes one read of url as user, with policy pol when it is
// not zero, and returns its X-N header and body.
func attack91Read(t *testing.T, tr *Transport, url, user string, pol Policy) (string, string, error) {
	ctx := context.Background()
	if pol != (Policy{}) {
		ctx = WithPolicy(ctx, pol)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("Authorization", "XBL3.0 x="+user+";token-"+user)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return "", "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.Header.Get("X-N"), string(b), err
}

// held: concurrent stores of one key with different answers. 32 callers,
// each of its own policy (so each leads a request of its own: the flight
// key holds the policy, the cache key does not), read one of 4 URLs at
// once, 60 rounds, the answers fresh for 1 s and a second passing every
// other round: every caller gets one whole answer of its URL (its header
// and body of one request), and after each round the counts equal what
// the cache holds.
func TestAttack91RaceSameKeyDifferentAnswers(t *testing.T) {
	var seq atomic.Int64
	base := attack91iRT(func(r *http.Request) (*http.Response, error) {
		time.Sleep(10 * time.Millisecond) // every caller of the round is under way at once
		n := seq.Add(1)
		body := fmt.Sprintf("%s n=%d %s", r.URL.Path, n, strings.Repeat("b", int(n%5)*300))
		h := http.Header{"X-N": {strconv.FormatInt(n, 10)}, "Cache-Control": {"max-age=1"}}
		return &http.Response{StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: h, Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
	})
	synctest.Test(t, func(t *testing.T) {
		tr := &Transport{Base: base, TitleID: "1234567890", CoalesceReads: true, ReadCacheTTL: MaxReadCacheTTL, DisableBudget: true}
		for round := range 60 {
			var wg sync.WaitGroup
			for g := range 32 {
				wg.Go(func() {
					path := fmt.Sprintf("/k/%d", (round+g)%4)
					pol := Policy{AttemptTimeout: time.Duration(g+1) * time.Second}
					n, body, err := attack91Read(t, tr, "https://profile.xboxlive.com"+path, "1111", pol)
					if err != nil {
						t.Error(err)
						return
					}
					if !strings.HasPrefix(body, path+" n="+n+" ") {
						t.Errorf("read of %s: X-N %s with body %.40q", path, n, body)
					}
				})
			}
			wg.Wait()
			attack91Counts(t, tr)
			if round%2 == 1 {
				time.Sleep(1100 * time.Millisecond)
			}
		}
		t.Logf("%d requests for %d reads", seq.Load(), 60*32)
	})
}

// held: reads during compaction. ReadCacheTTL of 2 ms: answers expire
// while 16 callers of 16 policies read 50 keys (concurrent stores of one
// key, expired entries dropped on reads, compaction whenever stale
// references are as many as entries) and 16 callers of no policy read 50
// other keys, while a checker compares the counts with what the cache
// holds every millisecond, on the wall clock, for 2,000 reads each.
func TestAttack91RaceReadsDuringCompaction(t *testing.T) {
	var seq atomic.Int64
	base := attack91iRT(func(r *http.Request) (*http.Response, error) {
		n := seq.Add(1)
		body := fmt.Sprintf("%s n=%d", r.URL.Path, n)
		return &http.Response{StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{"X-N": {strconv.FormatInt(n, 10)}}, Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
	})
	tr := &Transport{Base: base, TitleID: "1234567890", CoalesceReads: true, ReadCacheTTL: 2 * time.Millisecond, DisableBudget: true}
	done := make(chan struct{})
	var checks atomic.Int64
	var checker sync.WaitGroup
	checker.Go(func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
				attack91Counts(t, tr)
				checks.Add(1)
			}
		}
	})
	var wg sync.WaitGroup
	for g := range 32 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for range 2000 {
				var path string
				var pol Policy
				if g < 16 {
					path = fmt.Sprintf("/churn/%d", rng.IntN(50))
					pol = Policy{AttemptTimeout: time.Duration(g+1) * time.Second}
				} else {
					path = fmt.Sprintf("/read/%d", rng.IntN(50))
				}
				n, body, err := attack91Read(t, tr, "https://profile.xboxlive.com"+path, "1111", pol)
				if err != nil {
					t.Error(err)
					return
				}
				if body != path+" n="+n {
					t.Errorf("read of %s: X-N %s with body %q", path, n, body)
					return
				}
			}
		})
	}
	wg.Wait()
	close(done)
	checker.Wait()
	entries, refs := attack91Counts(t, tr)
	t.Logf("%d requests for %d reads, %d checks; at the end %d entries, %d references", seq.Load(), 32*2000, checks.Load(), entries, refs)
}

// held: a Transport used by 64 goroutines, 200 reads each, over 10,000 keys (100 users
// times 100 URLs), some answers fresh for 1 s, every 10th key's answer
// 128 KiB (so both bounds are reached: 4,096 answers and 64 MiB): every read
// gets its own key's answer, and the counts, checked by a 65th goroutine
// as it goes and at the end, equal what the cache holds.
func TestAttack91Race64Goroutines10kKeys(t *testing.T) {
	var seq atomic.Int64
	big := strings.Repeat("B", 128<<10)
	base := attack91iRT(func(r *http.Request) (*http.Response, error) {
		n := seq.Add(1)
		user := r.Header.Get("Authorization")
		body := r.URL.Path + " " + user
		k, _ := strconv.Atoi(r.URL.Query().Get("k"))
		if k%10 == 0 {
			body += " " + big
		}
		h := http.Header{"X-N": {strconv.FormatInt(n, 10)}}
		if k%10 == 1 {
			h.Set("Cache-Control", "max-age=1")
		}
		return &http.Response{StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: h, Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
	})
	tr := &Transport{Base: base, TitleID: "1234567890", CoalesceReads: true, ReadCacheTTL: MaxReadCacheTTL, DisableBudget: true}
	done := make(chan struct{})
	var checker sync.WaitGroup
	checker.Go(func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
				attack91Counts(t, tr)
			}
		}
	})
	var wg sync.WaitGroup
	var failed atomic.Bool
	for g := range 64 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 2))
			for range 200 {
				k := rng.IntN(10000)
				user := strconv.Itoa(1000 + k/100)
				path := fmt.Sprintf("/users/%d/profile", k%100)
				_, body, err := attack91Read(t, tr, fmt.Sprintf("https://profile.xboxlive.com%s?k=%d", path, k), user, Policy{})
				if err != nil {
					t.Error(err)
					return
				}
				if !strings.HasPrefix(body, path+" XBL3.0 x="+user+";") && failed.CompareAndSwap(false, true) {
					t.Errorf("read of key %d (%s as %s) got %.60q", k, path, user, body)
				}
			}
		})
	}
	wg.Wait()
	close(done)
	checker.Wait()
	entries, refs := attack91Counts(t, tr)
	t.Logf("%d requests for %d reads; at the end %d entries, %d references, %d bytes", seq.Load(), 64*200, entries, refs, tr.reads.bytes)
}

// held: "an expired entry removed when found on a read" (RELIABILITY.md,
// 12:55 UTC): a read that finds its entry expired takes it out at once,
// its bytes given back, before the request it then sends; that request
// failing, nothing is stored, and the next store compacts the stale
// reference away (stale references as many as entries).
func TestAttack91ExpiredEntryLeavesOnRead(t *testing.T) {
	var fail atomic.Bool
	base := attack91iRT(func(r *http.Request) (*http.Response, error) {
		if fail.Load() {
			return nil, errors.New("down")
		}
		return &http.Response{StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{"Cache-Control": {"max-age=1"}}, Body: io.NopCloser(strings.NewReader(strings.Repeat("x", 100<<10))), Request: r}, nil
	})
	synctest.Test(t, func(t *testing.T) {
		tr := &Transport{Base: base, TitleID: "1234567890", CoalesceReads: true, ReadCacheTTL: MaxReadCacheTTL, DisableBudget: true,
			RetryWindow: -1}
		url := "https://profile.xboxlive.com/users/me/profile"
		if _, _, err := attack91Read(t, tr, url, "1111", Policy{}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		fail.Store(true)
		if _, _, err := attack91Read(t, tr, url, "1111", Policy{}); err == nil {
			t.Fatal("the failing base answered")
		}
		entries, refs := attack91Counts(t, tr)
		if entries != 0 || refs != 1 || tr.reads.bytes != 0 {
			t.Errorf("after the read of an expired entry: %d entries, %d references, %d bytes counted; want 0, 1, 0", entries, refs, tr.reads.bytes)
		}
		fail.Store(false)
		if _, _, err := attack91Read(t, tr, url+"?other", "1111", Policy{}); err != nil {
			t.Fatal(err)
		}
		if entries, refs = attack91Counts(t, tr); entries != 1 || refs != 1 {
			t.Errorf("after the next store: %d entries, %d references; want 1, 1", entries, refs)
		}
	})
}
