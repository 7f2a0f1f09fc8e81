package transport

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/redistest"
	"github.com/xblgo/fgrl/throttle"
	"github.com/xblgo/fgrl/throttle/redisstore"
)

// held: a fleet of two Transports (A, B) on one real Redis and one service
// (profile burst 6 where the table says 10). Redis is paused while A's two
// users go past their burst: A learns and confirms burst 6 locally and owes
// Redis the two learn reports and the users' blocks/counts. Redis resumes;
// A's next calls pay what it owes. Then B (its learned limits re-read)
// calls as a third user (8 calls) and as A's first user (8 calls, same
// 15 s window): want no 429 at B, Redis holding burst 6 confirmed.
func TestAttack33FleetOutageReportsReachFleet(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	store := &redisstore.Store{Client: srv.Client(), Timeout: 100 * time.Millisecond}
	svc := attack31Served(t, 6) // one service for the whole fleet
	a := &Transport{Base: svc, TitleID: "1234567890", Budget: store, RetryWindow: -1}
	b := &Transport{Base: svc, TitleID: "1234567890", Budget: store, RetryWindow: -1}
	attack31ProfileAs(a, "2533274790000090")
	attack31ProfileAs(b, "2533274790000091")

	srv.Pause()
	for range 8 {
		attack31ProfileAs(a, "2533274790000001")
	}
	for range 8 {
		attack31ProfileAs(a, "2533274790000002")
	}
	srv.Resume()
	if n := attack31LearnedBurst(a); n != 6 {
		t.Skipf("setup: A did not confirm burst 6 during the outage (%+v)", a.LearnedLimits())
	}
	time.Sleep(1100 * time.Millisecond) // past the node check's pacing
	f := a.budget.(*failover)
	for i := range 10 { // A's calls pay what it owes
		attack31ProfileAs(a, fmt.Sprintf("25332747900002%02d", i))
		if f.nOwed.Load() == 0 {
			break
		}
	}
	if n := f.nOwed.Load(); n != 0 {
		t.Errorf("after Redis came back and A made 10 calls, A still owes %d operations: against README's Fleets: what the services reported meanwhile \"reaches Redis with the calls after it\"", n)
	}
	in, err := store.Learned(context.Background(), time.Now())
	if err != nil {
		t.Fatalf("setup: Redis not back: %v", err)
	}
	found := false
	for _, l := range in {
		if l.Scope == "profile" && l.Period == throttle.Burst && l.Limit == 6 {
			found = true
		}
	}
	if !found {
		t.Errorf("Redis has %+v after A paid what it owed; want profile burst 6 confirmed: against Transport.MaxLearnedLimit: \"the reports of a limit confirmed meanwhile are owed to it (as the budget's are...)\"", in)
	}
	b.learned.readAt.Store(0)
	before := b.Stats().Server429s
	for range 8 {
		attack31ProfileAs(b, "2533274790000003")
	}
	third := b.Stats().Server429s - before
	before = b.Stats().Server429s
	for range 8 {
		attack31ProfileAs(b, "2533274790000001")
	}
	first := b.Stats().Server429s - before
	if third != 0 || first != 0 {
		t.Errorf("after the outage ended and A paid what it owed, B's calls got 429s from the service: a third user %d of 8 (burst 6 confirmed in the fleet: want 0), A's first user (burst spent, blocked by the service, same window) %d (want 0). "+
			"Against README's Fleets: what the services reported meanwhile \"reaches Redis with the calls after it\" and Transport.MaxLearnedLimit: \"shared with every transport on it\"", third, first)
	}
}
