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

// TestConditionalReadsAreNotShared: an answer may be shared
// only with calls whose request it answers. A conditional GET
// (If-None-Match, If-Modified-Since) gets 304 Not Modified and no body
// when its copy is fresh, but the conditional headers are not in the
// read key: a plain GET of the same user that joins it gets the 304 and an
// empty body for data it never had (an unconditional GET is never
// answered 304, RFC 9110 15.4.5; no service names If-None-Match in Vary).
func TestConditionalReadsAreNotShared(t *testing.T) {
	for _, h := range []string{"If-None-Match", "If-Modified-Since"} {
		t.Run(h, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					time.Sleep(100 * time.Millisecond)
					if r.Header.Get("If-None-Match") != "" || r.Header.Get("If-Modified-Since") != "" {
						return &http.Response{StatusCode: 304, Header: http.Header{"Etag": {`"v1"`}}, Body: http.NoBody, Request: r}, nil
					}
					return &http.Response{StatusCode: 200, Header: http.Header{"Etag": {`"v1"`}}, Body: io.NopCloser(strings.NewReader("profile data")), Request: r}, nil
				})
				tr := &Transport{Base: base, TitleID: "1234567890", CoalesceReads: true}
				var wg sync.WaitGroup
				wg.Go(func() {
					readAs(context.Background(), tr, func(hd http.Header) { hd.Set(h, `"v1"`) })
				})
				synctest.Wait()
				got, err := readAs(context.Background(), tr, nil) // a plain GET
				wg.Wait()
				if got != "200 profile data" {
					t.Errorf("a plain GET made while a conditional one (%s) was under way got %q, %v; want \"200 profile data\"", h, got, err)
				}
			})
		})
	}
}
