package transport

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/throttle"
)

// attack35Served answers each user's profile call with a 429 reporting the
// burst limit burst[user] (15 s), or 200 for a user it has none for.
func attack35Served(burst map[string]int) (http.RoundTripper, *sync.Mutex) {
	var mu sync.Mutex
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		mu.Lock()
		defer mu.Unlock()
		for u, n := range burst {
			if req.Header.Get("Authorization") == mock.Token(u, title) {
				return attackCoreResp(req, 429, nil, `{"version":1,"currentRequests":99,"maxRequests":`+strconv.Itoa(n)+`,"periodInSeconds":15,"limitType":"Rate"}`), nil
			}
		}
		return attackCoreResp(req, 200, nil, `{}`), nil
	}), &mu
}

func attack35Key(tr *Transport, user string) int {
	for _, l := range tr.LearnedLimits() {
		if l.Scope == "profile" && l.Period == throttle.Burst && l.User == user {
			return l.Learned
		}
	}
	return 0
}

const (
	attack35A = "2533274790000001"
	attack35B = "2533274790000002"
	attack35C = "2533274790000003"
	attack35D = "2533274790000004"
)

// TestAttack35KeyLimitDroppedByNextRead: the fleet's store has profile's burst
// 6 confirmed (users A and B). User C's 429 then reports burst 4 for C: a
// limit for C alone, awaiting confirmation, which LearnedLimits lists and
// C's calls count against. Eleven seconds later another user's call makes
// the transport read the store (refreshLearned), which has the scope's 6:
// the read drops C's key limit, 590 s before the LearnedFor it was
// promised, and C's calls count against 6 again, into the service's 4.
func TestAttack35KeyLimitDroppedByNextRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base, _ := attack35Served(map[string]int{attack35A: 6, attack35B: 6, attack35C: 4})
		store := &throttle.MemoryBudgetStore{}
		var mu sync.Mutex
		var events []Event
		tr := &Transport{Base: base, TitleID: title, Budget: store, RetryWindow: -1, Observe: func(_ context.Context, e Event) {
			if e.Kind == EventLimitLearned {
				mu.Lock()
				events = append(events, e)
				mu.Unlock()
			}
		}}
		attack31ProfileAs(tr, attack35A)
		attack31ProfileAs(tr, attack35B)
		if n := attack31LearnedBurst(tr); n != 6 {
			t.Fatalf("two users' 429s of burst 6: confirmed %d, want 6", n)
		}
		attack31ProfileAs(tr, attack35C)
		var cUser string
		for _, l := range tr.LearnedLimits() {
			if l.User != "" {
				cUser = l.User
			}
		}
		if cUser == "" || attack35Key(tr, cUser) != 4 {
			t.Fatalf("C's 429 of burst 4: LearnedLimits %+v, want C's key limit 4", tr.LearnedLimits())
		}
		time.Sleep(11 * time.Second)
		mu.Lock()
		nBefore := len(events)
		mu.Unlock()
		attack31ProfileAs(tr, attack35D) // any call: the store is read again
		mu.Lock()
		nEv := len(events) - nBefore
		mu.Unlock()
		if n := attack35Key(tr, cUser); n != 4 {
			t.Errorf("11 s after C's 429 reported burst 4 for C, C's key limit is %d (LearnedLimits %+v): the store's read of the scope's 6 dropped it; "+
				"LearnedLimit: \"A limit one key's 429 reported applies to that key alone (User) until a report of the same limit from another user, "+
				"or from a later window, confirms it for the whole scope; either lasts throttle.LearnedFor (two sustain windows) after the last report of it\"",
				n, tr.LearnedLimits())
		}
		if n := attack35Key(tr, cUser); n != 4 && nEv == 0 {
			t.Errorf("C's key limit of 4 left LearnedLimits without an EventLimitLearned: EventLimitLearned: \"a learned limit changed " +
				"(Transport.LearnedLimits) ... or a learned limit ended ... Once per change\"")
		}
	})
}
