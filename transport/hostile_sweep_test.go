package transport

import (
	"fmt"
	"net/http"
	"testing"
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
