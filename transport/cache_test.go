package transport

import (
	"errors"
	"net/http"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// TestCacheKeepsLiveEntries: storing later deadlines for many other users
// never drops a live entry. A victim gets Retry-After 60, then 1,100 other
// users get 61: the victim's next call is still failed fast.
func TestCacheKeepsLiveEntries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var s sends
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			s.add()
			ra := "61"
			if r.Header.Get("X-Victim") != "" {
				ra = "60"
			}
			return respond(r, 429, ra), nil
		})
		tr := &Transport{Base: base, TitleID: title, DisableBudget: true, RetryWindow: -1}
		call := func(xuid string, victim bool) error {
			req, _ := http.NewRequest("GET", profileURL, nil)
			req.Header.Set("Authorization", "XBL3.0 x="+xuid+";t")
			if victim {
				req.Header.Set("X-Victim", "1")
			}
			_, err := tr.RoundTrip(req)
			return err
		}
		call("1", true)
		for i := range 1100 {
			call(strconv.Itoa(1000+i), false)
		}
		sent := s.count()
		time.Sleep(30 * time.Second)
		err := call("1", true)
		var te *ThrottleError
		if !errors.As(err, &te) || !te.Local || s.count() != sent {
			t.Errorf("victim's call 30 s into its 60 s Retry-After: %v, sent %d more; want a local refusal", err, s.count()-sent)
		}
	})
}

// TestCacheBounded: with more keys blocked at once than the cache holds, it
// stays at its cap, evicting the entry that ends soonest.
func TestCacheBounded(t *testing.T) {
	var c raCache
	c.m = map[throttle.Key]*raEntry{}
	now := time.Unix(0, 0)
	for i := range maxEntries + 10 {
		k := throttle.Key{User: strconv.Itoa(i), Scope: "profile"}
		c.store(k, now, now.Add(time.Hour+time.Duration(i)*time.Millisecond), 429, false)
	}
	if len(c.m) != maxEntries {
		t.Errorf("%d entries, want the cap %d", len(c.m), maxEntries)
	}
	if _, _, ok := c.pending(throttle.Key{User: "0", Scope: "profile"}, now); ok {
		t.Error("the entry ending soonest survived; want it evicted first")
	}
	if _, _, ok := c.pending(throttle.Key{User: strconv.Itoa(maxEntries + 9), Scope: "profile"}, now); !ok {
		t.Error("the newest entry was evicted")
	}
}
