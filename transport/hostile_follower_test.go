package transport

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestFollowerOutlastingItsLeaderTriesItself: "a follower never inherits
// another call's policy". A call's context deadline decides, as its policy
// does, whether it waits and retries (mayRetry, maxWait), but it is not in
// the flight's key: a follower with no deadline that joins a leader whose
// deadline is 2 s away gets the leader's un-retried 503, where its own
// call retries and gets the 200.
func TestFollowerOutlastingItsLeaderTriesItself(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n atomic.Int32
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			first := n.Add(1) == 1
			time.Sleep(100 * time.Millisecond)
			if first {
				return &http.Response{StatusCode: 503, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
			}
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("data")), Request: r}, nil
		})
		tr := &Transport{Base: base, TitleID: "1234567890", CoalesceReads: true}
		short, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		var wg sync.WaitGroup
		var leader string
		wg.Go(func() { leader, _ = readAs(short, tr, nil) })
		synctest.Wait() // the leader's request is under way
		follower, err := readAs(context.Background(), tr, nil)
		wg.Wait()
		if follower != "200 data" {
			t.Errorf("a follower with no deadline got %q, %v (the leader, 2 s from its deadline, got %q); want \"200 data\": its own call retries the 503", follower, err, leader)
		}
	})
}
