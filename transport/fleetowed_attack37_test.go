package transport

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/xblgo/fgrl/internal/redistest"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/throttle"
	"github.com/xblgo/fgrl/throttle/redisstore"
)

// attack37Call sends one profile GET as xuid through tr within ctx.
func attack37Call(ctx context.Context, tr *Transport, xuid string) error {
	req, _ := http.NewRequestWithContext(ctx, "GET", attack31ProfileURL, nil)
	req.Header.Set("Authorization", mock.Token(xuid, "1234567890"))
	resp, err := tr.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
	}
	return err
}

// TestAttack37FleetOwedCountsNotPaidBeforeOtherReplicaBooks: a fleet of two
// Transports (A, B) on one real Redis and one service whose limits are the
// table's (profile burst 10, sustain 30: nothing to learn). Redis fails every command (a go-redis hook)
// while A's four users make 6 calls each: the service counts 6 of 10 for
// each and reports it (RateLimit), A books them locally and owes Redis the
// counts. Redis resumes; A keeps working (3 calls of another user after
// the node is back). Then B makes 10 calls for A's fourth user (two waves of 5, 50 ms apart, the service answering in 200 ms) in the same
// service window: the fleet should hold it to the 4 the service has left.
func TestAttack37FleetOwedCountsNotPaidBeforeOtherReplicaBooks(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	store, down := attack37Store(t, srv)
	svc := attack31Served(t, 10)
	a := &Transport{Base: svc, TitleID: "1234567890", Budget: store, RetryWindow: -1}
	b := &Transport{Base: svc, TitleID: "1234567890", Budget: store, RetryWindow: -1}
	attack31ProfileAs(a, "2533274790001090")
	attack31ProfileAs(b, "2533274790001091")

	down.on.Store(true)
	users := []string{"2533274790001001", "2533274790001002", "2533274790001003", "2533274790001004"}
	for _, u := range users {
		for range 6 {
			attack31ProfileAs(a, u)
		}
	}
	down.on.Store(false)
	if n := a.Stats().Server429s; n != 0 {
		t.Skipf("setup: A got %d 429s during the outage", n)
	}
	time.Sleep(1100 * time.Millisecond) // past the node check's pacing
	for range 3 {                       // A is not idle: its calls after the outage
		attack31ProfileAs(a, "2533274790001005")
	}
	owed := a.budget.(*failover).nOwed.Load()
	before := b.Stats()
	b.Base = attack37Slow(svc)
	sent := attack37Waves(b, users[3], 10)
	after := b.Stats()
	t.Logf("owed %d sent %d 429 %d refused %d", owed, sent, after.Server429s-before.Server429s, after.LocalRefusals-before.LocalRefusals)
	if n := after.Server429s - before.Server429s; n != 0 {
		t.Errorf("after Redis came back and A made 3 more calls (A still owing %d operations), B's 10 calls (two waves) for a user A served 6 times during the outage got %d 429s from the service (%d sent OK; the service had 4 left in its 15 s window): "+
			"the fleet sent past the service's limit after the outage. Against README's Fleets: what the services reported meanwhile (\"a 429's block, RateLimit counts ...) reaches Redis with the calls after it\" and Transport.Budget: \"give them one budget per key\" "+
			"(A pays one other key's owed operation per call, and only A's calls pay what A owes)", owed, n, sent)
	}
}

// attack37SyncFails is a real Redis store whose Sync and Block fail while
// fail is set (a store that "fails it": Transport.Budget), everything else
// going through to Redis.
type attack37SyncFails struct {
	*redisstore.Store
	fail atomic.Bool
}

func (s *attack37SyncFails) Sync(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time, p throttle.Period, used int, reset time.Duration) error {
	if s.fail.Load() {
		return errors.New("attack37151: sync failed")
	}
	return s.Store.Sync(ctx, k, l, now, p, used, reset)
}

func (s *attack37SyncFails) Block(ctx context.Context, k throttle.Key, now, until time.Time) error {
	if s.fail.Load() {
		return errors.New("attack37151: block failed")
	}
	return s.Store.Block(ctx, k, now, until)
}

// TestAttack37PendingReportConcurrentCallsOvershoot: a user's 5 calls go during
// a Redis outage (booked locally; the service reports 5 of 10 used, owed
// to Redis). Redis is back for bookings, but the owed counts cannot be
// paid yet (the store fails the Sync). 20 calls of that user then arrive
// in waves of 5, 50 ms apart (the service answering in 200 ms): each is booked in both stores and "holds the stricter", but the
// local store's booking is given back at once, so the local store (which
// has the report) never counts the calls Redis admitted, and Redis (which
// counts them) lacks the report: 10 more go, 15 in the service's window.
func TestAttack37PendingReportConcurrentCallsOvershoot(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rs, down := attack37Store(t, srv)
	store := &attack37SyncFails{Store: rs}
	svc := attack31Served(t, 10)
	a := &Transport{Base: svc, TitleID: "1234567890", Budget: store, RetryWindow: -1}
	attack31ProfileAs(a, "2533274790002090")
	const u = "2533274790002001"
	down.on.Store(true)
	for range 5 {
		attack31ProfileAs(a, u)
	}
	down.on.Store(false)
	store.fail.Store(true)
	time.Sleep(1100 * time.Millisecond)
	if n := a.Stats().Server429s; n != 0 {
		t.Skipf("setup: %d 429s during the outage", n)
	}
	if !a.budget.(*failover).pending(throttleKeyOf(t, a, u)) {
		t.Skip("setup: the user's report is not owed")
	}
	a.Base = attack37Slow(svc)
	ok := attack37Waves(a, u, 20)
	t.Logf("ok %d 429 %d", ok, a.Stats().Server429s)
	if n := a.Stats().Server429s; n != 0 {
		t.Errorf("20 calls (waves of 5) of a user whose outage counts (5 of 10 used) are owed to a working Redis: %d sent OK, %d answered 429 by the service (it had 5 left). "+
			"Against Transport.Budget: \"until a key's reports have reached the store, its calls are booked in both stores and hold the stricter (the shared store counts them for the fleet, the local one has the reports ...)\": "+
			"failover.stricter gives the local booking back, so neither store has both the report and the calls", ok, n)
	}
}

// throttleKeyOf is the budget key of user xuid's profile calls through tr.
func throttleKeyOf(t *testing.T, tr *Transport, xuid string) throttle.Key {
	t.Helper()
	f := tr.budget.(*failover)
	f.owedMu.Lock()
	defer f.owedMu.Unlock()
	for _, o := range f.owed {
		if o.report() { // the only user owing reports
			return o.k
		}
	}
	t.Fatalf("no owed report of %s among %+v", xuid, f.owed)
	return throttle.Key{}
}

var _ = fmt.Sprint

// attack37Slow answers after 200 ms: a service's round trip.
func attack37Slow(h http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		time.Sleep(200 * time.Millisecond)
		return h.RoundTrip(r)
	})
}

// attack37Waves sends n calls of xuid through tr in waves of 5, 50 ms apart,
// and returns how many went.
func attack37Waves(tr *Transport, xuid string, n int) int {
	var wg sync.WaitGroup
	var ok atomic.Int32
	for i := range n {
		if i > 0 && i%5 == 0 {
			time.Sleep(50 * time.Millisecond)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if attack37Call(context.Background(), tr, xuid) == nil {
				ok.Add(1)
			}
		}()
	}
	wg.Wait()
	return int(ok.Load())
}

// attack37Down fails every Redis command while set: an outage in which
// nothing reaches Redis (a paused redis-server runs what was queued in its
// socket when it resumes).
type attack37Down struct{ on atomic.Bool }

func (h *attack37Down) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *attack37Down) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if h.on.Load() {
			cmd.SetErr(errors.New("attack37151: redis down"))
			return cmd.Err()
		}
		return next(ctx, cmd)
	}
}
func (h *attack37Down) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if h.on.Load() {
			for _, c := range cmds {
				c.SetErr(errors.New("attack37151: redis down"))
			}
			return cmds[0].Err()
		}
		return next(ctx, cmds)
	}
}

// attack37Store is a redisstore on srv whose commands all fail while the
// returned hook is on.
func attack37Store(t *testing.T, srv *redistest.Server) (*redisstore.Store, *attack37Down) {
	c := srv.Client()
	h := &attack37Down{}
	c.AddHook(h)
	return &redisstore.Store{Client: c, Timeout: 100 * time.Millisecond}, h
}
