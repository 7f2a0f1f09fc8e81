package transport

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// cacheFiller sends n distinct reads (URLs from offset) through tr.
func cacheFiller(tb testing.TB, tr *Transport, offset, n int) {
	tb.Helper()
	for i := range n {
		req, _ := http.NewRequest("GET", fmt.Sprintf("%s&n=%d", readURL, offset+i), nil)
		req.Header.Set("Authorization", "XBL3.0 x=1111;token-a")
		resp, err := tr.RoundTrip(req)
		if err != nil {
			tb.Fatal(err)
		}
		resp.Body.Close()
	}
}

func sweepTransport() *Transport {
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	})
	return &Transport{Base: base, TitleID: "1234567890", CoalesceReads: true, ReadCacheTTL: 10 * time.Second, DisableBudget: true}
}

// BenchmarkReadCacheFull is a distinct read against a cache with room
// and against a full one: storing into a full cache costs O(1) (the
// entries leave in the order they came), never a scan of the cache under
// its lock.
func BenchmarkReadCacheFull(b *testing.B) {
	for _, fill := range []int{0, maxCachedEntries} {
		b.Run(fmt.Sprintf("held=%d", fill), func(b *testing.B) {
			b.ReportAllocs()
			tr := sweepTransport()
			cacheFiller(b, tr, 0, fill)
			b.ResetTimer()
			cacheFiller(b, tr, fill, b.N)
		})
	}
}

// TestReadCacheFullTakesNewAnswers: a new answer that finds the cache full
// takes the room of the oldest, and entries that have expired behind one
// still fresh give theirs up then, not once the fresh one ends.
func TestReadCacheFullTakesNewAnswers(t *testing.T) {
	type read struct {
		n    int  // the read's URL's n
		sent bool // it reaches the base
	}
	for _, tc := range []struct {
		name   string
		maxAge string // of every answer but the first's, which states none
		after  time.Duration
		reads  []read
	}{
		{"live", "", 0, []read{{maxCachedEntries, true}, {maxCachedEntries, false}, {1, false}, {0, true}}},
		{"expired behind a live one", "max-age=1", 1100 * time.Millisecond, []read{{maxCachedEntries, true}, {maxCachedEntries, false}, {maxCachedEntries + 1, true}, {maxCachedEntries + 1, false}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var sent atomic.Int64
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					sent.Add(1)
					h := http.Header{}
					if r.URL.Query().Get("n") != "0" && tc.maxAge != "" {
						h.Set("Cache-Control", tc.maxAge)
					}
					return &http.Response{StatusCode: 200, Header: h, Body: http.NoBody, Request: r}, nil
				})
				tr := &Transport{Base: base, TitleID: "1234567890", CoalesceReads: true, ReadCacheTTL: MaxReadCacheTTL, DisableBudget: true}
				cacheFiller(t, tr, 0, maxCachedEntries)
				time.Sleep(tc.after)
				for i, r := range tc.reads {
					before := sent.Load()
					cacheFiller(t, tr, r.n, 1)
					if got := sent.Load() > before; got != r.sent {
						t.Errorf("read %d (n=%d): sent %v, want %v", i, r.n, got, r.sent)
					}
				}
			})
		})
	}
}

// TestReadCacheCompactionKeepsOneReference: an entry replaced by one that
// ends at the same instant leaves the one reference of the new entry;
// compaction takes out the places of those dropped and keeps it.
func TestReadCacheCompactionKeepsOneReference(t *testing.T) {
	tr := sweepTransport()
	c := &tr.reads
	t0 := time.Unix(0, 0)
	entry := func(k readKey, life time.Duration) *shared {
		return &shared{resp: &http.Response{}, until: t0.Add(life), size: k.size()}
	}
	a, b, d, e := readKey{uri: "/a"}, readKey{uri: "/b"}, readKey{uri: "/d"}, readKey{uri: "/e"}
	tr.store(b, entry(b, time.Second), t0)
	tr.store(d, entry(d, time.Second), t0)
	tr.store(a, entry(a, 5*time.Second), t0)
	tr.store(a, entry(a, 5*time.Second), t0) // the first reference goes: nil in its place
	t2 := t0.Add(2 * time.Second)
	tr.cached(b, t2) // expired: dropped
	tr.cached(d, t2)
	tr.store(e, entry(e, 5*time.Second), t2) // three stale references for one entry: compacted
	if len(c.order) != 2 || c.stale != 0 || c.bytes != a.size()+e.size() {
		t.Errorf("%d references, %d stale, %d bytes; want 2, 0, %d", len(c.order), c.stale, c.bytes, a.size()+e.size())
	}
}
