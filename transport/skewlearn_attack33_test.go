package transport

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/clock"
	"github.com/xblgo/fgrl/internal/redistest"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/throttle"
	"github.com/xblgo/fgrl/throttle/redisstore"
)

// attack33Skewed is a replica's clock running ahead of Redis's.
type attack33Skewed struct {
	clock.Real
	ahead time.Duration
}

func (c attack33Skewed) Now() time.Time { return time.Now().Add(c.ahead) }

func attack33ProfileAt(tr *Transport, c clock.Clock, xuid string) {
	req, _ := http.NewRequestWithContext(clock.With(context.Background(), c), "GET", attack31ProfileURL, nil)
	req.Header.Set("Authorization", mock.Token(xuid, "1234567890"))
	if resp, err := tr.RoundTrip(req); err == nil {
		resp.Body.Close()
	}
}

// TestAttack33SkewedReplicaStaleLearnOverridesFleet: redisstore on its default
// (Redis's clock: "replicas with skewed clocks agree"). Replica A's clock is
// 30 s ahead. While Redis is paused, A's two users confirm profile burst 8
// locally (A owes Redis the two reports, timed by A's clock). Redis comes
// back; the service has tightened to 6, which replica B's two users report
// and Redis confirms: the limit reported last. A then pays its owed reports:
// learnNews compares Redis's report time (Until - LearnedFor, Redis's clock)
// with the owed report's At (A's clock, 30 s ahead) and takes the older
// report for news; Redis times the replayed reports on arrival and the stale
// 8 replaces the fleet's newer 6. A new replica C then lets its user's burst
// into the service's 429s.
func TestAttack33SkewedReplicaStaleLearnOverridesFleet(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	store := &redisstore.Store{Client: srv.Client(), Timeout: 100 * time.Millisecond}
	skew := attack33Skewed{ahead: 30 * time.Second}
	a := &Transport{Base: attack31Served(t, 8), TitleID: "1234567890", Budget: store, RetryWindow: -1}
	attack33ProfileAt(a, skew, "2533274790000090") // Redis reached once
	srv.Pause()
	for range 10 {
		attack33ProfileAt(a, skew, "2533274790000001")
	}
	for range 10 {
		attack33ProfileAt(a, skew, "2533274790000002")
	}
	srv.Resume()
	if n := attack31LearnedBurst(a); n != 8 {
		t.Skipf("setup: A did not confirm burst 8 during the outage (%+v)", a.LearnedLimits())
	}
	time.Sleep(1100 * time.Millisecond) // past the node check's pacing
	b := &Transport{Base: attack31Served(t, 6), TitleID: "1234567890", Budget: store, RetryWindow: -1}
	for range 8 {
		attack31ProfileAs(b, "2533274790000003")
	}
	for range 8 {
		attack31ProfileAs(b, "2533274790000004")
	}
	in, err := store.Learned(context.Background(), time.Now())
	if err != nil || len(in) != 1 || in[0].Limit != 6 {
		t.Skipf("setup: Redis has %+v (%v), want burst 6 confirmed by B", in, err)
	}
	f := a.budget.(*failover)
	for i := range 10 { // A's calls pay what it owes
		attack33ProfileAt(a, skew, "253327479000010"+string(rune('0'+i)))
		if f.nOwed.Load() == 0 {
			break
		}
	}
	in, _ = store.Learned(context.Background(), time.Now())
	c := &Transport{Base: attack31Served(t, 6), TitleID: "1234567890", Budget: store, RetryWindow: -1}
	attack31ProfileAs(c, "2533274790000020") // reads the fleet's limits
	got := attack31LearnedBurst(c)
	before := c.Stats().Server429s
	for range 8 {
		attack31ProfileAs(c, "2533274790000021")
	}
	n429 := c.Stats().Server429s - before
	if len(in) != 1 || in[0].Limit != 6 || got != 6 || n429 != 0 {
		var lim []int
		for _, l := range in {
			if l.Scope == "profile" && l.Period == throttle.Burst {
				lim = append(lim, l.Limit)
			}
		}
		t.Errorf("Redis confirmed burst 6 (B's users, after A's users reported 8 during the outage); A, whose clock is 30 s ahead of Redis's, then paid its owed reports of 8: "+
			"Redis now has profile burst %v, a new replica C holds the scope to %d and its user's 8 calls collected %d 429s (want 6, 6, 0). "+
			"Against README: \"time comes from Redis TIME so replicas with skewed clocks agree\", and Transport.MaxLearnedLimit: the reports are owed \"not once it has a limit of that window reported later\"; "+
			"\"the one reported last holds\". Fix: learnNews compares Redis's report time with the owed report's At on the caller's clock; under Redis's clock "+
			"(CallerTime false) compare with a time both share (e.g. the owed report's age: Redis's now minus (caller's now - r.At)), or have the store refuse a report older than its limit of the window",
			lim, got, n429)
	}
}
