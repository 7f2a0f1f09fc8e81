package transport

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// TestSharedAnswerTrailerIsTheCallers: each caller of a shared read gets its own copy
// of the answer (shared.response: "a caller's own copy"). The header is
// cloned, but the Trailer map is the leader's, shared by every follower
// and by the cache's later callers: one caller writing its trailers (or
// net/http's reader filling them) writes everyone's, a data race under
// -race, and a change that outlives the caller in the cache. The same
// holds for TransferEncoding and TLS.
func TestSharedAnswerTrailerIsTheCallers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			time.Sleep(100 * time.Millisecond)
			return &http.Response{StatusCode: 200, Header: http.Header{}, Trailer: http.Header{"X-Checksum": {"abc"}}, Request: r, Body: io.NopCloser(strings.NewReader("ok"))}, nil
		})
		tr := &Transport{Base: base, TitleID: "1234567890", CoalesceReads: true, ReadCacheTTL: 5 * time.Second}
		get := func() *http.Response {
			req, _ := http.NewRequestWithContext(context.Background(), "GET", readURL, nil)
			req.Header.Set("Authorization", "XBL3.0 x=1111;token-a")
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp
		}
		var wg sync.WaitGroup
		var first *http.Response
		wg.Go(func() { first = get() })
		synctest.Wait()
		second := get()
		wg.Wait()
		first.Trailer.Set("X-Checksum", "changed by the first caller")
		third := get() // from the cache
		for name, resp := range map[string]*http.Response{"follower": second, "cache's caller": third} {
			if got := resp.Trailer.Get("X-Checksum"); got != "abc" {
				t.Errorf("the %s's trailer reads %q after another caller changed its own", name, got)
			}
		}
	})
}
