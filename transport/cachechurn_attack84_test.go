package transport

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// attack84CheckCount recomputes what the cache holds (live entries' sizes;
// the places of entries replaced or dropped hold nil) and compares it with
// its count.
func attack84CheckCount(t *testing.T, tr *Transport) (entries, counted int) {
	t.Helper()
	c := &tr.reads
	c.mu.Lock()
	defer c.mu.Unlock()
	want, stale := 0, 0
	for _, s := range c.cache {
		want += s.size
	}
	seen := map[*shared]bool{}
	for i, s := range c.order {
		switch {
		case s == nil:
			stale++
		case s.ref != i || c.cache[s.key] != s || seen[s]:
			t.Errorf("order: the reference at %d to %.40q is not the one to an entry of the map", i, s.key.uri)
		default:
			seen[s] = true
		}
	}
	if c.bytes < 0 || len(c.cache) > maxCachedEntries || c.bytes > maxCachedBytes {
		t.Errorf("cache counts %d bytes, %d entries", c.bytes, len(c.cache))
	}
	if c.bytes != want || c.stale != stale {
		t.Errorf("cache counts %d bytes and %d stale references; it holds %d bytes and %d stale references", c.bytes, c.stale, want, stale)
	}
	return len(c.cache), c.bytes
}

// held: entries replaced many times (answers that expire after 1 s read
// again, live ones replaced by a concurrent flight of another policy,
// keys whose Accept and X-Xbl-Contract-Version hold 256 KiB), under
// concurrency: the cache's count never goes negative, never drifts from
// what it holds (keys of replaced entries included, as ReadCacheTTL's
// godoc says: "counting the memory of bodies, headers, status lines and
// keys (a replaced answer's key too, until it leaves)"), and stays within
// "at most 4,096 answers and 64 MiB".
func TestAttack84CacheChurnCountNeverDrifts(t *testing.T) {
	big := strings.Repeat("a", 256<<10)
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		h := http.Header{}
		if strings.Contains(r.URL.Path, "short") {
			h.Set("Cache-Control", "max-age=1")
		}
		return &http.Response{StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: h, Body: io.NopCloser(strings.NewReader("ok")), ContentLength: 2, Request: r,
			TLS: &tls.ConnectionState{HandshakeComplete: true}}, nil
	})
	synctest.Test(t, func(t *testing.T) {
		tr := &Transport{Base: base, TitleID: "1234567890", CoalesceReads: true, ReadCacheTTL: MaxReadCacheTTL, DisableBudget: true}
		get := func(url string, huge bool, pol Policy) *http.Response {
			ctx := context.Background()
			if pol != (Policy{}) {
				ctx = WithPolicy(ctx, pol)
			}
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			req.Header.Set("Authorization", "XBL3.0 x=1111;token-a")
			if huge {
				req.Header.Set("Accept", big)
				req.Header.Set("X-Xbl-Contract-Version", big)
			}
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Error(err)
				return nil
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			return resp
		}
		get("https://profile.xboxlive.com/front", false, Policy{})
		maxCounted := 0
		for round := range 30 {
			var wg sync.WaitGroup
			for w := range 8 {
				wg.Go(func() {
					for i := range 40 {
						huge := i%8 == 0
						path := "short"
						if i%3 == 0 {
							path = "long"
						}
						pol := Policy{}
						if w%2 == 1 {
							pol.AttemptTimeout = time.Duration(1+w) * time.Second
						}
						get(fmt.Sprintf("https://profile.xboxlive.com/%s/%d", path, i), huge, pol)
					}
				})
			}
			wg.Wait()
			_, counted := attack84CheckCount(t, tr)
			maxCounted = max(maxCounted, counted)
			if round%3 == 2 {
				time.Sleep(1100 * time.Millisecond)
			}
		}
		time.Sleep(MaxReadCacheTTL + time.Second)
		get("https://profile.xboxlive.com/last", false, Policy{}) // a store: expire walks everything
		entries, counted := attack84CheckCount(t, tr)
		t.Logf("peak %d bytes counted; at the end %d entries, %d bytes", maxCounted, entries, counted)
		if entries != 1 {
			t.Errorf("%d entries left after all but one expired", entries)
		}
	})
}

// held: with 256 KiB Accept values, the keys are counted: 64 MiB holds at
// most about 128 such answers ("counting the memory of ... keys").
func TestAttack84CacheHugeKeysCounted(t *testing.T) {
	big := strings.Repeat("b", 256<<10)
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", Header: http.Header{},
			Body: io.NopCloser(strings.NewReader("ok")), Request: r}, nil
	})
	synctest.Test(t, func(t *testing.T) {
		tr := &Transport{Base: base, TitleID: "1234567890", CoalesceReads: true, ReadCacheTTL: MaxReadCacheTTL, DisableBudget: true}
		for i := range 300 {
			req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("https://profile.xboxlive.com/k%d", i), nil)
			req.Header.Set("Authorization", "XBL3.0 x=1111;token-a")
			req.Header.Set("Accept", big)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		entries, counted := attack84CheckCount(t, tr)
		if entries > maxCachedBytes/(256<<10) {
			t.Errorf("%d answers of 256 KiB keys kept (%d bytes counted)", entries, counted)
		}
	})
}

// held: ReadCacheTTL: "it keeps no TLS state, so an answer from it has a
// nil TLS"; the leader's own answer keeps its connection's, and a follower
// of the same flight gets the leader's answer (CoalesceReads: "copied to
// each"), its TLS included, without sharing the leader's Header map.
func TestAttack84CacheHitTLSNilLeaderAndFollowerKeepIt(t *testing.T) {
	state := &tls.ConnectionState{HandshakeComplete: true, ServerName: "profile.xboxlive.com"}
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{}) // made in the bubble: a wait on it is durable
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			<-release
			return &http.Response{StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", Header: http.Header{"X-A": {"1"}},
				Body: io.NopCloser(strings.NewReader("ok")), Request: r, TLS: state}, nil
		})
		tr := &Transport{Base: base, TitleID: "1234567890", CoalesceReads: true, ReadCacheTTL: MaxReadCacheTTL, DisableBudget: true}
		get := func() *http.Response {
			req, _ := http.NewRequest(http.MethodGet, "https://profile.xboxlive.com/users/me/profile", nil)
			req.Header.Set("Authorization", "XBL3.0 x=1111;token-a")
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Error(err)
				return nil
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(b) != "ok" {
				t.Errorf("body %q", b)
			}
			return resp
		}
		var leader, follower *http.Response
		var wg sync.WaitGroup
		wg.Go(func() { leader = get() })
		synctest.Wait()
		wg.Go(func() { follower = get() })
		synctest.Wait()
		close(release)
		wg.Wait()
		hit := get()
		if leader == nil || follower == nil || hit == nil {
			t.Fatal("a call failed")
		}
		if leader.TLS != state || follower.TLS != state {
			t.Errorf("leader TLS %p, follower TLS %p, want the connection's %p", leader.TLS, follower.TLS, state)
		}
		if hit.TLS != nil {
			t.Errorf("a cache hit has TLS %+v", hit.TLS)
		}
		follower.Header.Set("X-A", "changed")
		if leader.Header.Get("X-A") != "1" || get().Header.Get("X-A") != "1" {
			t.Errorf("a follower's header change reached another answer")
		}
		if st := tr.Stats(); st.Coalesced != 3 {
			t.Logf("Stats.Coalesced %d", st.Coalesced)
		}
	})
}
