package transport_test

import (
	"context"
	"fmt"
	"github.com/xblgo/fgrl/internal/racebuild"
	"github.com/xblgo/fgrl/internal/scaletest"
	"net/http"
	"strings"
	"testing"
	"time"
)

// attack88PerRead times reads of urls (one token) through tr, per read.
func attack88PerRead(t *testing.T, tr http.RoundTripper, urls []string) time.Duration {
	t.Helper()
	auth := attack88Auth("1111", "token-a")
	start := time.Now()
	for _, u := range urls {
		resp, err := tr.RoundTrip(attack88Req(context.Background(), u, auth))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	return time.Since(start) / time.Duration(len(urls))
}

// TestAttack88ReadOfAnExpiredEntryScansTheCache: RELIABILITY.md, the read
// cache: "a full read cache (4,096 live answers) and a new distinct read |
// every store scanned the whole cache under its lock: 106 µs a read
// against 9 µs | entries leave in the order they came: 6.4 µs a read with
// a full cache"; the brief's superlinear time, many keys, long URLs.
//
// The cache is filled to its 64 MiB with answers whose URLs are 16 KiB and
// whose max-age is 1 s, behind one answer kept 10 s (no max-age). Once the
// 1 s has passed, each read of one of them again costs a pass over the
// whole cache under its lock, hashing every key: the cost of a read grows
// with the cache, not the read.
func TestAttack88ReadOfAnExpiredEntryScansTheCache(t *testing.T) {
	racebuild.Skip(t, "a test of sizes, times or heap figures")
	pad := strings.Repeat("p", 16<<10)
	urls := make([]string, 4000)
	for i := range urls {
		urls[i] = fmt.Sprintf("%s&n=%d&%s", attack88URL, i, pad)
	}
	short := &attack88Base{answer: func(r *http.Request) *http.Response {
		if r.URL.Query().Get("n") == "first" {
			return attack88OK(r, "", nil)
		}
		return attack88OK(r, "", http.Header{"Cache-Control": {"max-age=1"}})
	}}
	tr := attack88Transport(short)
	attack88PerRead(t, tr, []string{attack88URL + "&n=first"}) // kept 10 s, first in the cache's order
	fill := attack88PerRead(t, tr, urls)                       // up to the 64 MiB
	time.Sleep(1100 * time.Millisecond)
	again := attack88PerRead(t, tr, urls) // every one: the first read past their expiry sweeps them all, a cost the reads share

	// The documented case, for scale: a full cache of live entries, new
	// distinct reads with the same long URLs.
	live := attack88Transport(&attack88Base{answer: func(r *http.Request) *http.Response { return attack88OK(r, "", nil) }})
	attack88PerRead(t, live, urls)
	more := make([]string, 300)
	for i := range more {
		more[i] = fmt.Sprintf("%s&m=%d&%s", attack88URL, i, pad)
	}
	fresh := attack88PerRead(t, live, more)
	t.Logf("a read filling the cache: %v; a new read in a full cache: %v; a read of an expired entry: %v", fill, fresh, again)
	if again > 20*fresh && again > 500*time.Microsecond {
		t.Errorf("a read of an entry that expired costs %v, against %v for a new read in a full cache (%.0f×): each is a pass over the whole cache", again, fresh, float64(again)/float64(fresh))
	}
}

// TestAttack88ManyKeysLinear: the cost of a read does not grow with the
// number of distinct reads before it.
//
// held: 16,000 distinct reads of 1 KiB URLs cost per read what 2,000 do
// (within 4×).
func TestAttack88ManyKeysLinear(t *testing.T) {
	racebuild.Skip(t, "a test of times")
	pad := strings.Repeat("q", 1<<10)
	mk := func(n int) []string {
		u := make([]string, n)
		for i := range u {
			u[i] = fmt.Sprintf("%s&n=%d&%s", attack88URL, i, pad)
		}
		return u
	}
	reads := func(urls []string) func() {
		return func() {
			tr := attack88Transport(&attack88Base{answer: func(r *http.Request) *http.Response { return attack88OK(r, "x", nil) }})
			attack88PerRead(t, tr, urls)
		}
	}
	// Alternately, the least of two runs each (internal/scaletest: CI runs
	// this beside its fuzzing); a read whose cost grew with the keys before
	// it would cost 8x a read at 16,000, 64x the whole run.
	g := scaletest.Measure(2, reads(mk(2000)), reads(mk(16000)))
	t.Logf("2,000 distinct reads, then 16,000: %v (8x the reads)", g)
	if g.Ratio() > 6*8 {
		t.Errorf("a read's cost grows with the distinct reads before it: %v", g)
	}
}
