package transport

import (
	"context"
	"io"
	"net/http"
	"testing"
	"testing/synctest"
)

// TestLargeReadStreamsWhenCoalescing: CoalesceReads makes identical
// GETs share one request; a GET that no one shares should still get its
// answer. The leader reads every answer in full first, and an answer over
// MaxCoalescedBody (16 MiB) is an error for the leader itself, though it
// had no follower and its answer was a plain 200: with CoalesceReads on, a
// title storage download of 17 MiB (LongCall's own use) fails where it
// succeeds without.
func TestLargeReadStreamsWhenCoalescing(t *testing.T) {
	const size = MaxCoalescedBody + 1<<20
	for _, coalesce := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: 200, Header: http.Header{}, Request: r, ContentLength: size, Body: io.NopCloser(io.LimitReader(zeros{}, size))}, nil
			})
			tr := &Transport{Base: base, TitleID: "1234567890", CoalesceReads: coalesce}
			req, _ := http.NewRequestWithContext(WithPolicy(context.Background(), Policy{AttemptTimeout: LongCallTimeout}), "GET", "https://titlestorage.xboxlive.com/global/scids/00000000-0000-0000-0000-000000000000/data/big.bin,binary", nil)
			req.Header.Set("Authorization", "XBL3.0 x=1111;token-a")
			resp, err := tr.RoundTrip(req)
			var n int64
			if err == nil {
				n, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			if err != nil || n != size {
				t.Errorf("CoalesceReads %v: a %d-byte download read %d bytes, %v", coalesce, size, n, err)
			}
		})
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
