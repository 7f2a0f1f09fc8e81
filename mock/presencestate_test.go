package mock

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestPresenceUserState: PUT /users/xuid(N)/state, as
// OpenXbox/xbox-webapi-python's set_presence_own sends it ({"state":
// "Active"} or "Cloaked"; its test expects 200 with no body): a cloaked
// user reads as Offline to others, with no device and no last seen, even
// after their title writes; "Active" shows them again; another user's
// state is 403, an unknown state 400; the call counts as a presence write
// (3 in 15 s: the clock moves 15 s before each write).
func TestPresenceUserState(t *testing.T) {
	now := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	h := Must(New(Config{Now: func() time.Time { return now }}))
	write := func(method, url, auth, body string) result {
		t.Helper()
		now = now.Add(15 * time.Second)
		return do(t, h, method, url, auth, body)
	}
	tok := Token(xuid1, title1)
	state := "https://userpresence.xboxlive.com/users/xuid(" + xuid1 + ")/state"
	set := "https://userpresence.xboxlive.com/users/xuid(" + xuid1 + ")/devices/current/titles/current"
	get := func() presenceRecord {
		t.Helper()
		var rec presenceRecord
		decodeJSON(t, do(t, h, "GET", "https://userpresence.xboxlive.com/users/xuid("+xuid1+")", Token(xuid2, title1), ""), &rec)
		return rec
	}
	if r := write("POST", set, tok, `{"state":"active"}`); r.status != http.StatusOK {
		t.Fatalf("title write: %d %s", r.status, r.body)
	}
	r := write("PUT", state, tok, `{"state":"Cloaked"}`)
	if r.status != http.StatusOK || r.body != "" {
		t.Fatalf("cloak: %d %q, want 200 with no body", r.status, r.body)
	}
	if r.header.Get("RateLimit") == "" {
		t.Error("the state write was not counted")
	}
	if rec := get(); rec.State != "Offline" || rec.Devices != nil || rec.LastSeen != nil {
		t.Errorf("cloaked: %+v, want Offline with nothing more", rec)
	}
	write("POST", set, tok, `{"state":"active"}`)
	if rec := get(); rec.State != "Offline" {
		t.Errorf("cloaked after a title write: %+v, want Offline", rec)
	}
	write("PUT", state, tok, `{"state":"Active"}`)
	if rec := get(); rec.State != "Online" {
		t.Errorf("active again: %+v, want Online", rec)
	}
	if r := write("PUT", state, Token(xuid2, title1), `{"state":"Cloaked"}`); r.status != http.StatusForbidden {
		t.Errorf("another user's state: %d, want 403", r.status)
	}
	if r := write("PUT", state, tok, `{"state":"Away"}`); r.status != http.StatusBadRequest {
		t.Errorf("state Away: %d, want 400", r.status)
	}
}

// TestCloakOutlivesEviction: a cloak is the user's setting, not part of
// the presence record the bounded state may evict to make room for
// others. Once the record of a cloaked user (xuid2) is evicted, reads
// still show them Offline with no last seen, their title's next write
// stays behind the cloak, and a friend's RTA subscription hears nothing of
// it. Before, the cloak lived only in the record: the write after the
// eviction read Online, and the subscriber heard "Scarlett:true".
func TestCloakOutlivesEviction(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := Must(New(Config{World: rtaWorld(), MaxStateBytes: 256 << 10})) // presence: 64 KiB
		events := followOnline(t, h)                                        // xuid1 follows xuid2, who is online
		tok := Token(xuid2, title1)
		state := "https://userpresence.xboxlive.com/users/xuid(" + xuid2 + ")/state"
		time.Sleep(15 * time.Second)
		if r := do(t, h, "PUT", state, tok, `{"state":"Cloaked"}`); r.status != http.StatusOK {
			t.Fatalf("cloak: %d %s", r.status, r.body)
		}
		synctest.Wait()
		if got := lapseDrain(events); len(got) != 1 || got[0] != `"Scarlett:false"` {
			t.Fatalf("events after the cloak: %q", got)
		}
		evictPresence(t, h, xuid2, 2533274790400000)
		get := func() presenceRecord {
			t.Helper()
			var rec presenceRecord
			decodeJSON(t, do(t, h, "GET", "https://userpresence.xboxlive.com/users/xuid("+xuid2+")", Token(xuid1, title1), ""), &rec)
			return rec
		}
		if rec := get(); rec.State != "Offline" || rec.Devices != nil || rec.LastSeen != nil {
			t.Errorf("cloaked, record evicted: %+v, want Offline with nothing more", rec)
		}
		time.Sleep(15 * time.Second)
		if r := do(t, h, "POST", lapseSet, tok, `{"state":"active"}`); r.status != http.StatusOK {
			t.Fatalf("title write: %d %s", r.status, r.body)
		}
		synctest.Wait()
		if rec := get(); rec.State != "Offline" || rec.Devices != nil {
			t.Errorf("cloaked, record evicted, then a title write: %+v, want Offline", rec)
		}
		if got := lapseDrain(events); len(got) != 0 {
			t.Errorf("events heard of a cloaked user's eviction and write: %q, want none", got)
		}
		time.Sleep(15 * time.Second)
		do(t, h, "PUT", state, tok, `{"state":"Active"}`)
		if rec := get(); rec.State != "Online" {
			t.Errorf("active again: %+v, want Online", rec)
		}
	})
}

// TestCloaksPastTheBoundRefused: the mock holds as many cloaks as its
// state holds records (1,024 here); one more is refused (503) rather than
// made by forgetting another user's, and every cloak made still holds.
func TestCloaksPastTheBoundRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) { // its 1,024 lapse timers are the bubble's
		h := Must(New(Config{MaxKeys: 8})) // 1,024 records of each kind
		n := h.world.state.presence.maxEntries
		cloak := func(i int) result {
			x := strconv.Itoa(2533274790500000 + i)
			return do(t, h, "PUT", "https://userpresence.xboxlive.com/users/xuid("+x+")/state", Token(x, title1), `{"state":"Cloaked"}`)
		}
		for i := range n {
			if r := cloak(i); r.status != http.StatusOK {
				t.Fatalf("cloak %d: %d %s", i, r.status, r.body)
			}
		}
		if r := cloak(n); r.status != http.StatusServiceUnavailable || !strings.Contains(r.body, "cloak") {
			t.Errorf("cloak %d, past the bound: %d %s, want 503 saying why", n, r.status, r.body)
		}
		for i := range n {
			x := strconv.Itoa(2533274790500000 + i)
			if r := do(t, h, "POST", lapseSet, Token(x, title1), `{"state":"active"}`); r.status != http.StatusOK {
				t.Fatalf("write %d: %d", i, r.status)
			}
		}
		for i := range n {
			x := strconv.Itoa(2533274790500000 + i)
			if p := h.world.presenceOf(x); p.State != "Offline" {
				t.Fatalf("user %d of %d cloaked reads %s after a write", i, n, p.State)
			}
		}
	})
}
