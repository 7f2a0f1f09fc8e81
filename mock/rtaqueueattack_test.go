package mock

import (
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// A helper's attack on the RTA connection's queue of delayed events, the
// subscribe's lock and the presence records' byte accounting.

// TestRTAQueueStreamConsistent: xuid2 sets, clears, cloaks, uncloaks and
// lapses, with ResetWorld, Resync and rta latency faults of varying
// length coming and going between; xuid1's device subscription must hear
// Scarlett:true and Scarlett:false alternate (no event lost, duplicated or
// reordered) and last hear what a get reads.
func TestRTAQueueStreamConsistent(t *testing.T) {
	for seed := range uint64(40) {
		synctest.Test(t, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			h := rtaHandler(t)
			events := followDevices(t, h)
			state := "https://userpresence.xboxlive.com/users/xuid(" + xuid2 + ")/state"
			var log []string
			for range 30 {
				var op string
				switch rng.IntN(9) {
				case 0, 1:
					op = "set1"
					do(t, h, "POST", lapseSet, Token(xuid2, title1), `{"state":"active"}`)
				case 2:
					op = "set2"
					do(t, h, "POST", lapseSet, Token(xuid2, title2), `{"state":"active"}`)
				case 3:
					op = "clear"
					do(t, h, "DELETE", lapseSet, Token(xuid2, title1), "")
				case 4:
					op = "cloak"
					do(t, h, "PUT", state, Token(xuid2, title1), `{"state":"Cloaked"}`)
				case 5:
					op = "uncloak"
					do(t, h, "PUT", state, Token(xuid2, title1), `{"state":"Active"}`)
				case 6:
					op = "reset"
					h.ResetWorld()
				case 7:
					d := time.Duration(1+rng.IntN(20)) * time.Second
					f := time.Duration(rng.IntN(30)) * time.Second
					op = "fault " + d.String() + " for " + f.String()
					if err := h.SetFaults(Faults{Services: []ServiceFault{{Service: RTAService, Latency: throttle.Duration(d), For: throttle.Duration(f)}}}); err != nil {
						t.Fatal(err)
					}
				case 8:
					op = "resync"
					h.Resync()
				}
				log = append(log, op)
				if rng.IntN(6) == 0 {
					time.Sleep(heartbeatExpiry + 5*time.Second)
					log = append(log, "lapse")
				} else {
					time.Sleep(time.Duration(10+rng.IntN(6)) * time.Second)
				}
			}
			time.Sleep(time.Minute)
			synctest.Wait()
			got := lapseDrain(events)
			last := `"Scarlett:false"`
			for i, e := range got {
				if e == last {
					t.Errorf("seed %d: event %d %s repeats the one before: %q\nops %q", seed, i, e, got, log)
					return
				}
				last = e
			}
			want := `"Scarlett:false"`
			if h.world.presenceOf(xuid2).State == "Online" {
				want = `"Scarlett:true"`
			}
			if last != want {
				t.Errorf("seed %d: last heard %s, a get reads %s\nevents %q\nops %q", seed, last, h.world.presenceOf(xuid2).State, got, log)
			}
		})
	}
}

// TestRTASessionTapBeforeItsSubscribeAnswer: an MPSD write's shoulder tap
// never reaches a connection ahead of the answer of a subscribe made
// meanwhile, whose subscription id the client has yet to learn (it would
// drop the tap, missing the session change). xuid1 subscribes and
// unsubscribes while users join and leave its session, in a loop. Before,
// the write did not take the lock a subscribe answers under: 14 of 20
// runs failed.
func TestRTASessionTapBeforeItsSubscribeAnswer(t *testing.T) {
	h := rtaHandler(t)
	hc := pipeServer(t, h)
	ws := dialRTA(t, hc, xuid1)
	scid := SCID(title1) // the writer's title's
	do(t, h, "PUT", "https://sessiondirectory.xboxlive.com/serviceconfigs/"+scid+"/sessiontemplates/lobby/sessions/s1",
		Token(xuid1, title1), `{"members":{"me":{"constants":{"system":{"initialize":true}}}}}`)
	var writes atomic.Int64
	taps := 0
	stop := make(chan struct{})
	writer := make(chan struct{})
	go func() {
		defer close(writer)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			body := `{"members":{"me":{"constants":{"system":{"initialize":true}}}}}`
			if i%2 == 1 {
				body = `{"members":{"me":null}}` // and leaves, so the session stays small
			}
			req, _ := http.NewRequest("PUT", "https://sessiondirectory.xboxlive.com/serviceconfigs/"+scid+"/sessiontemplates/lobby/sessions/s1",
				strings.NewReader(body))
			req.Header.Set("Authorization", Token(strconv.Itoa(2533274790500000+i/2), title1)) // a member joins xuid1's session
			if resp, err := h.RoundTrip(req); err == nil {
				if resp.StatusCode < 300 {
					writes.Add(1)
				}
				resp.Body.Close()
			}
		}
	}()
	defer func() { close(stop); <-writer; t.Logf("%d writes, %d taps read", writes.Load(), taps) }()
	answered := map[string]bool{}
	early := 0
	for seq := 1; seq <= 2000 && early == 0; seq++ {
		write(t, ws, `[1,`+strconv.Itoa(seq)+`,"https://sessiondirectory.xboxlive.com/connections/"]`)
		var sub string
		for sub == "" {
			a := read(t, ws)
			switch string(a[0]) {
			case "1":
				sub = string(a[3])
				answered[sub] = true
			case "3":
				taps++
				if !answered[string(a[1])] {
					early++
					t.Errorf("subscribe %d: a tap for subscription %s before its answer: %s", seq, a[1], a[2])
				}
			}
		}
		write(t, ws, `[2,`+strconv.Itoa(seq)+`,`+sub+`]`)
		for {
			a := read(t, ws)
			if string(a[0]) == "2" {
				break
			}
		}
	}
}

// TestPresenceBudgetAccounting: cloaks, uncloaks, large and small writes,
// clears and resets by many users (XUIDs up to 816 bytes), in a 64 KiB
// presence budget: after each, bytes is the records' sizes plus reserved,
// reserved is the cloaks' bytes and at most half the budget, and neither
// passes the budget.
func TestPresenceBudgetAccounting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := Must(New(Config{World: rtaWorld(), MaxStateBytes: 256 << 10}))
		rng := rand.New(rand.NewPCG(1, 2))
		const users = 1100
		large := largestPresence(title1)
		refused := 0
		var maxRes int64
		for i := range 12000 {
			u := strconv.Itoa(2533274790700000 + i%users)
			if rng.IntN(3) == 0 {
				u += strings.Repeat("y", rng.IntN(800)) // XUIDs of other lengths
			}
			var r result
			switch rng.IntN(8) {
			case 0, 1:
				r = do(t, h, "PUT", "https://userpresence.xboxlive.com/users/me/state", Token(u, title1), `{"state":"Cloaked"}`)
			case 2:
				r = do(t, h, "PUT", "https://userpresence.xboxlive.com/users/me/state", Token(u, title1), `{"state":"Active"}`)
			case 3, 4:
				r = do(t, h, "POST", lapseSet, Token(u, title1), large)
			case 5:
				r = do(t, h, "POST", lapseSet, Token(u, title1), `{"state":"active"}`)
			case 6:
				r = do(t, h, "DELETE", lapseSet, Token(u, title1), "")
			case 7:
				if rng.IntN(1500) == 0 {
					h.ResetWorld()
				}
			}
			if r.status == http.StatusServiceUnavailable {
				refused++
			}
			h.world.state.mu.Lock()
			p := &h.world.state.presence
			var sum, cl int64
			for _, e := range p.m {
				sum += e.size
			}
			for x := range h.world.state.cloaked {
				cl += cloakBytes(x)
			}
			b, res, n := p.bytes, p.reserved, len(p.m)
			h.world.state.mu.Unlock()
			maxRes = max(maxRes, res)
			if b != sum+res || res != cl || b > p.maxBytes || res < 0 || res > p.maxBytes/2 || n > p.maxEntries {
				t.Fatalf("op %d: bytes %d (entries %d + reserved %d), cloaks hold %d, budget %d, %d entries", i, b, sum, res, cl, p.maxBytes, n)
			}
			time.Sleep(time.Second)
		}
		t.Logf("%d cloaks refused, at most %d reserved", refused, maxRes)
	})
}

// TestRTADelayedEventAfterUnsubscribeAnswered: under an rta latency fault
// an event waits in the connection's queue; once an unsubscribe of its
// subscription is answered, it is dropped, not sent for a subscription the
// client no longer holds. Before, it followed the answer.
func TestRTADelayedEventAfterUnsubscribeAnswered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := rtaHandler(t)
		ws := dialRTA(t, pipeServer(t, h), xuid1)
		_, sub, _ := subscribe(t, ws, 1, devicesURI(xuid2))
		if err := h.SetFaults(Faults{Services: []ServiceFault{{Service: RTAService, Latency: throttle.Duration(5 * time.Second)}}}); err != nil {
			t.Fatal(err)
		}
		do(t, h, "POST", lapseSet, Token(xuid2, title1), `{"state":"active"}`)
		write(t, ws, `[2,2,`+strconv.Itoa(sub)+`]`)
		if a := read(t, ws); string(a[0]) != "2" {
			t.Fatalf("answer to unsubscribe: %s", a)
		}
		time.Sleep(10 * time.Second)
		synctest.Wait()
		h.Resync()
		if a := read(t, ws); string(a[0]) != "4" {
			t.Errorf("after the unsubscribe was answered: %s, for subscription %d", a, sub)
		}
	})
}
