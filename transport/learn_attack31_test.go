package transport

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/internal/redistest"
	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/throttle"
	"github.com/xblgo/fgrl/throttle/redisstore"
)

// attack31LimitStore is attack28Store whose learned-limit operations fail too
// while the store is down (as redisstore's do against an unreachable
// Redis): attack28Store's Learn and Learned are the embedded
// MemoryBudgetStore's, which never fail.
type attack31LimitStore struct{ *attack28Store }

func (s attack31LimitStore) Learn(ctx context.Context, r throttle.LimitReport) (throttle.Learned, error) {
	if err := s.check(ctx, throttle.Key{User: "learn"}); err != nil {
		return throttle.Learned{}, err
	}
	return s.MemoryBudgetStore.Learn(ctx, r)
}

func (s attack31LimitStore) Learned(ctx context.Context, now time.Time) ([]throttle.Learned, error) {
	if err := s.check(ctx, throttle.Key{User: "learned"}); err != nil {
		return nil, err
	}
	return s.MemoryBudgetStore.Learned(ctx, now)
}

const attack31ProfileURL = "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag"

// attack31Served is a service applying profile burst/30 where the table says 10 / 30.
func attack31Served(t *testing.T, burst int) *mock.Handler {
	t.Helper()
	served, err := limits.Read(strings.NewReader(fmt.Sprintf(`{"rules": [{"service": "profile", "hosts": ["profile.xboxlive.com"], "burst": %d, "sustain": 30}]}`, burst)))
	if err != nil {
		t.Fatal(err)
	}
	h, err := mock.New(mock.Config{Limits: served})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func attack31ProfileAs(tr *Transport, xuid string) {
	req, _ := http.NewRequest("GET", attack31ProfileURL, nil)
	req.Header.Set("Authorization", mock.Token(xuid, "1234567890"))
	if resp, err := tr.RoundTrip(req); err == nil {
		resp.Body.Close()
	}
}

func attack31LearnedBurst(tr *Transport) int {
	for _, l := range tr.LearnedLimits() {
		if l.Scope == "profile" && l.Period == throttle.Burst && l.User == "" {
			return l.Learned
		}
	}
	return 0
}

const attack31LearnPromise = "Transport.MaxLearnedLimit: \"once another user's 429, or one from a later window, reports the same " +
	"limit, every key of the scope does ... A learned limit ... lasts throttle.LearnedFor (two sustain windows) after the " +
	"last 429 that reported it. Reports and confirmed limits are kept in Budget when it is a throttle.LimitStore, shared " +
	"with every transport on it\"; Transport.Budget: \"While it fails, the transport uses a local budget\""

// TestAttack31LearnedLimitDroppedDuringOutage: a limit confirmed in the shared
// store (profile's burst 6 where the table says 10) is in force for every
// key of the scope. The store then goes down (a store that does not isolate
// failures). Within the outage the transport reads its learned limits
// again (refreshLearned, every 10 s) from its own local limit store, which
// never had the fleet's confirmed limit, and replaces what it had with
// that: the confirmed limit ends a minute after it was confirmed, long
// before LearnedFor, and the scope's calls count against the table's 10
// again: a third user's burst of 8 is sent into the service's 429.
func TestAttack31LearnedLimitDroppedDuringOutage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := attack31LimitStore{&attack28Store{MemoryBudgetStore: &throttle.MemoryBudgetStore{}}}
		tr := &Transport{Base: attack31Served(t, 6), TitleID: "1234567890", Budget: store, RetryWindow: -1}
		for range 8 {
			attack31ProfileAs(tr, "2533274790000001")
		}
		for range 8 {
			attack31ProfileAs(tr, "2533274790000002")
		}
		if n := attack31LearnedBurst(tr); n != 6 {
			t.Fatalf("setup: confirmed burst %d, want 6 (%+v)", n, tr.LearnedLimits())
		}
		time.Sleep(time.Minute) // every window frees its calls

		store.fail.Store(true) // the outage starts
		// Other users' calls go on every 130 ms for 11.7 s (one call each,
		// within every limit): the store is probed once a second, and the
		// learned limits are read again once in the 11 s.
		for i := range 90 {
			attack31ProfileAs(tr, fmt.Sprintf("25332747901%05d", i))
			time.Sleep(130 * time.Millisecond)
		}
		got := attack31LearnedBurst(tr)
		before := tr.Stats().Server429s
		for range 8 {
			attack31ProfileAs(tr, "2533274790000003")
		}
		n429 := tr.Stats().Server429s - before
		if got != 6 || n429 != 0 {
			t.Errorf("71 s after profile's burst 6 was confirmed in the shared store, 11 s into its outage, the "+
				"transport's confirmed burst is %d (want 6) and a third user's 8 calls collected %d 429s (want 0: "+
				"6 sent, 2 refused locally): the re-read of learned limits during the outage read the local limit "+
				"store, which never had the fleet's limit, and dropped it; against %s", got, n429, attack31LearnPromise)
		}
	})
}

// TestAttack31LearnedDuringOutageLostOnRecovery: the store is down (a store
// that does not isolate failures); two users' 429s confirm profile's
// burst 6 in the transport's local limit store (the shared one cannot take
// them). The store recovers; at the transport's next read of learned
// limits (within 10 s) it reads the shared store, which never had them, and
// replaces what it had: the limit confirmed a few seconds before is gone,
// long before LearnedFor, and a third user's burst of 8 is sent into the
// service's 429.
func TestAttack31LearnedDuringOutageLostOnRecovery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := attack31LimitStore{&attack28Store{MemoryBudgetStore: &throttle.MemoryBudgetStore{}}}
		tr := &Transport{Base: attack31Served(t, 6), TitleID: "1234567890", Budget: store, RetryWindow: -1}
		store.fail.Store(true) // down from the start: the first call finds it
		for range 8 {
			attack31ProfileAs(tr, "2533274790000001")
		}
		for range 8 {
			attack31ProfileAs(tr, "2533274790000002")
		}
		if n := attack31LearnedBurst(tr); n != 6 {
			t.Skipf("setup: the outage did not confirm burst 6 locally (%+v)", tr.LearnedLimits())
		}
		store.fail.Store(false)      // recovered
		time.Sleep(20 * time.Second) // windows free; the next call reads the learned limits again
		attack31ProfileAs(tr, "2533274790000009")
		got := attack31LearnedBurst(tr)
		before := tr.Stats().Server429s
		for range 8 {
			attack31ProfileAs(tr, "2533274790000003")
		}
		n429 := tr.Stats().Server429s - before
		if got != 6 || n429 != 0 {
			t.Errorf("20 s after two users' 429s confirmed profile's burst 6 during the shared store's outage, the store "+
				"recovered: the transport's confirmed burst is %d (want 6) and a third user's 8 calls collected %d 429s "+
				"(want 0): the limit learned while the store was down was neither kept nor owed to it, and the re-read "+
				"from the recovered store dropped it; against %s", got, n429, attack31LearnPromise)
		}
	})
}

// TestAttack31LearnedDuringRedisOutageLostOnRecovery: the same with a fleet's
// redisstore (it isolates failures; its Redis paused, as a stalled one):
// two users' 429s confirm profile's burst 6 while Learn cannot reach Redis,
// so the transport's local limit store keeps it. Redis comes back; the
// transport's next read of learned limits (every 10 s; forced here by
// rewinding its read time) reads Redis, which never had the limit, and
// drops it: a third user's burst of 8 is sent into the service's 429.
func TestAttack31LearnedDuringRedisOutageLostOnRecovery(t *testing.T) {
	srv := redistest.Start(t)
	store := &redisstore.Store{Client: srv.Client(), Timeout: 100 * time.Millisecond}
	tr := &Transport{Base: attack31Served(t, 6), TitleID: "1234567890", Budget: store, RetryWindow: -1}
	attack31ProfileAs(tr, "2533274790000009") // Redis reached once
	srv.Pause()
	for range 8 {
		attack31ProfileAs(tr, "2533274790000001")
	}
	for range 8 {
		attack31ProfileAs(tr, "2533274790000002")
	}
	srv.Resume()
	if n := attack31LearnedBurst(tr); n != 6 {
		t.Skipf("setup: the outage did not confirm burst 6 locally (%+v)", tr.LearnedLimits())
	}
	// Wait for the store's node check (a decision probes the node a
	// second after it failed), then let the transport's 10 s re-read of
	// learned limits come.
	time.Sleep(1100 * time.Millisecond)
	attack31ProfileAs(tr, "2533274790000007") // this call's booking probes the node: up again
	if _, err := store.Learned(context.Background(), time.Now()); err != nil {
		t.Skipf("setup: Redis not back: %v", err)
	}
	tr.learned.readAt.Store(0)
	attack31ProfileAs(tr, "2533274790000008")
	got := attack31LearnedBurst(tr)
	before := tr.Stats().Server429s
	for range 8 {
		attack31ProfileAs(tr, "2533274790000003")
	}
	n429 := tr.Stats().Server429s - before
	if got != 6 || n429 != 0 {
		t.Errorf("a second after two users' 429s confirmed profile's burst 6 while Redis was paused, Redis back and "+
			"the transport's learned limits read again: its confirmed burst is %d (want 6) and a third user's 8 calls "+
			"collected %d 429s (want 0): the limit learned during the outage never reached Redis and the re-read "+
			"dropped it; against %s", got, n429, attack31LearnPromise)
	}
}
