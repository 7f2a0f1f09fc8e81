package transport

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestAttack80CoalCacheOrderHoldsReplacedKeys attacks the read cache's memory
// bound. ReadCacheTTL's godoc (transport.go) promises:
//
//	"The cache holds at most 4,096 answers and 64
//	MiB, counting the memory of bodies, headers, status lines and keys."
//
// store (readcache.go) counts an entry's key while the entry is in the
// map, and stops counting it when the entry is replaced; but the entry's
// cacheRef in c.order, which holds its own readKey (its own copy of the
// request URI: RequestURI builds a new string for each request with a
// query), stays until expire walks past it, and expire stops at the first
// live entry. One answer kept 10 s at the front (no max-age) then holds
// back every reference after it: 40 reads of 900 KiB URIs whose answers
// say max-age=1, read again each 1.1 s, are counted once (about 35 MiB)
// while the references to the replaced entries keep every earlier
// request's URI: well past the 64 MiB bound.
//
// The service is an httptest handler served in memory (httptest.NewRecorder
// behind the base RoundTripper), inside a synctest bubble, so that the
// 10 s the front entry lives are virtual and the test measures the same
// under -race.
func TestAttack80CoalCacheOrderHoldsReplacedKeys(t *testing.T) {
	const (
		keys   = 40
		uriLen = 900 << 10
		rounds = 4
	)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/front" {
			w.Header().Set("Cache-Control", "max-age=1")
		}
		io.WriteString(w, "ok")
	})
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, r)
		resp := rec.Result()
		resp.Request = r
		return resp, nil
	})
	synctest.Test(t, func(t *testing.T) {
		tr := &Transport{Base: base, TitleID: "1234567890", CoalesceReads: true, ReadCacheTTL: MaxReadCacheTTL, DisableBudget: true}
		get := func(url string) {
			t.Helper()
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
			req.Header.Set("Authorization", "XBL3.0 x=1111;token-a")
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		long := strings.Repeat("x", uriLen)

		get("https://profile.xboxlive.com/front") // kept MaxReadCacheTTL: the first reference in c.order
		for r := range rounds {
			if r > 0 {
				time.Sleep(1100 * time.Millisecond) // every max-age=1 answer is stale: the next read replaces it
			}
			for i := range keys {
				get(fmt.Sprintf("https://profile.xboxlive.com/k%d?q=%s", i, long))
			}
		}

		tr.reads.mu.Lock()
		entries, refs, counted := len(tr.reads.cache), len(tr.reads.order), tr.reads.bytes
		stale := 0 // URI bytes of references to entries replaced since
		for _, s := range tr.reads.order {
			if s != nil && tr.reads.cache[s.key] != s {
				stale += len(s.key.uri)
			}
		}
		tr.reads.mu.Unlock()
		var with runtime.MemStats
		attack80SettleHeap()
		runtime.ReadMemStats(&with)
		runtime.KeepAlive(tr)
		tr = nil
		var without runtime.MemStats
		attack80SettleHeap()
		runtime.ReadMemStats(&without)
		held := int64(with.HeapAlloc) - int64(without.HeapAlloc)
		t.Logf("%d entries, %d references (%d MiB of URIs of replaced entries), %d MiB counted; the transport held %d MiB of heap",
			entries, refs, stale>>20, counted>>20, held>>20)
		if counted <= maxCachedBytes && held > maxCachedBytes {
			t.Errorf("the read cache counts %d MiB (%d entries) but holds %d MiB through %d references: bound is 64 MiB", counted>>20, entries, held>>20, refs)
		}
	})
}
