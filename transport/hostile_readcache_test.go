package transport

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestReadCacheHoldsNoRequest: the read cache's 64 MiB bound
// is to count everything it holds (body, headers, key). Each cached answer
// is a copy of the leader's *http.Response, whose Request field is the
// leader's own request (as net/http and every well-behaved base set it):
// its headers (the token among them) and its context stay reachable from
// the cache for the entry's life, and none of it is counted. 100 reads with
// 1 MiB of request headers and a 2-byte answer keep ~100 MiB alive while
// the cache counts ~30 KB.
func TestReadCacheHoldsNoRequest(t *testing.T) {
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("ok")), Request: r}, nil
	})
	tr := &Transport{Base: base, TitleID: "1234567890", CoalesceReads: true, ReadCacheTTL: 10 * time.Second, DisableBudget: true}
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	for i := range 100 {
		req, _ := http.NewRequestWithContext(context.Background(), "GET", fmt.Sprintf("%s&n=%d", readURL, i), nil)
		req.Header.Set("Authorization", "XBL3.0 x=1111;token-a")
		req.Header.Set("X-Trace", strings.Repeat("x", 1<<20)) // a caller's large request header (or context value)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	held := int64(heap()) - int64(before)
	runtime.KeepAlive(tr)
	if held > maxCachedBytes {
		t.Errorf("after 100 cached reads the heap holds %d MiB more (the cache counts %d bytes, its bound is %d MiB): each entry keeps the leader's request alive, uncounted",
			held>>20, tr.reads.bytes, maxCachedBytes>>20)
	}
	for _, s := range tr.reads.cache {
		if s.resp.Request != nil && s.resp.Request.Header.Get("Authorization") != "" {
			t.Errorf("a cached entry keeps the leader's request and its token (%q...) in memory", s.resp.Request.Header.Get("Authorization")[:12])
			break
		}
	}
}
