package mock

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/xblgo/fgrl/internal/redistest"
	"github.com/xblgo/fgrl/throttle"
	"github.com/xblgo/fgrl/throttle/redisstore"
)

// TestTwoMocksOneRedis: two mock replicas sharing one Redis enforce one
// budget: 12 profile calls for one pair, alternating replicas, give 10
// served and 2 throttled.
func TestTwoMocksOneRedis(t *testing.T) {
	srv := redistest.Start(t)
	replicas := []*Server{
		NewServer(Must(New(Config{Store: &redisstore.Store{Client: srv.Client()}}))),
		NewServer(Must(New(Config{Store: &redisstore.Store{Client: srv.Client()}}))),
	}
	for _, r := range replicas {
		defer r.Close()
	}
	served, throttled := 0, 0
	for i := 0; i < 12; i++ {
		req, _ := http.NewRequest("GET", profileURL, nil)
		req.Header.Set("Authorization", Token(xuid1, title1))
		resp, err := replicas[i%2].Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		switch resp.StatusCode {
		case 200:
			served++
		case 429:
			throttled++
		default:
			t.Fatalf("call %d: %d", i, resp.StatusCode)
		}
	}
	if served != 10 || throttled != 2 {
		t.Errorf("served %d, throttled %d; want 10 and 2", served, throttled)
	}
	d, err := replicas[0].Handler.Counts(throttle.Key{User: UserHash(xuid1), Title: title1, Scope: "profile"})
	if err != nil || d.Burst.Count != 12 {
		t.Errorf("Counts = %+v, %v; want 12 counted", d, err)
	}
}

// TestRedisDownMock: with Redis gone the mock answers 503 with a JSON error,
// or serves when told to fail open.
func TestRedisDownMock(t *testing.T) {
	srv := redistest.Start(t)
	closed := Must(New(Config{Store: &redisstore.Store{Client: srv.Client(), Timeout: 200e6}}))
	open := Must(New(Config{Store: &redisstore.Store{Client: srv.Client(), Timeout: 200e6}, FailOpen: true}))
	srv.Kill()
	r := do(t, closed, "GET", profileURL, Token(xuid1, title1), "")
	var e errorBody
	if r.status != 503 || json.Unmarshal([]byte(r.body), &e) != nil || e.Code != "ThrottleStoreUnavailable" {
		t.Errorf("fail closed: %d %s", r.status, r.body)
	}
	if r := do(t, open, "GET", profileURL, Token(xuid1, title1), ""); r.status != 200 {
		t.Errorf("fail open: %d %s", r.status, r.body)
	}
}
