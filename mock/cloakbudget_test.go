package mock

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// presenceBudget reads the presence records' byte accounting.
func presenceBudget(h *Handler) (bytes, reserved, max int64, records int) {
	h.world.state.mu.Lock()
	defer h.world.state.mu.Unlock()
	p := &h.world.state.presence
	return p.bytes, p.reserved, p.maxBytes, len(p.m)
}

// cloakUntil has users with no presence record cloak (each XUID 64
// bytes) until a cloak is refused or fewer than room bytes of the half of
// the presence budget cloaks may hold are left; it returns how many did.
func cloakUntil(t *testing.T, h *Handler, room int64) int {
	t.Helper()
	for n := 0; ; n++ {
		_, reserved, max, _ := presenceBudget(h)
		if max/2-reserved < room+cloakBytes(strings.Repeat("x", 64)) {
			return n
		}
		x := "c" + strconv.Itoa(n)
		x += strings.Repeat("x", 64-len(x))
		if r := do(t, h, "PUT", "https://userpresence.xboxlive.com/users/me/state", Token(x, title1), `{"state":"Cloaked"}`); r.status != http.StatusOK {
			return n
		}
	}
}

// TestCloaksLeaveRecordsHalfTheBudget: cloaks take at most half of the
// presence records' bytes, so that the largest presence a set takes is
// still stored once no more cloaks fit (and the set is not answered 200
// while the user's old record stays). Before, 510 cloaks of users with no
// record could reserve nearly all of a 64 KiB budget, and a heartbeat of
// 5.4 KB was dropped while answered 200 (a helper's attack).
func TestCloaksLeaveRecordsHalfTheBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := Must(New(Config{World: rtaWorld(), MaxStateBytes: 256 << 10})) // presence: 64 KiB
		n := cloakUntil(t, h, 0)
		if r := do(t, h, "PUT", "https://userpresence.xboxlive.com/users/me/state", Token("one-more", title1), `{"state":"Cloaked"}`); r.status != http.StatusServiceUnavailable {
			t.Errorf("a cloak past %d: %d, want 503", n, r.status)
		}
		_, reserved, max, _ := presenceBudget(h)
		if reserved > max/2 {
			t.Errorf("%d cloaks reserve %d bytes of %d, over half", n, reserved, max)
		}
		for i := range 3 { // heartbeats of the largest presence, 300 s apart
			time.Sleep(heartbeatAfter * time.Second)
			if r := do(t, h, "POST", lapseSet, Token(xuid2, title2), largestPresence(title2)); r.status != http.StatusOK {
				t.Fatalf("heartbeat %d: %d %s", i+1, r.status, r.body)
			}
			p := h.world.presenceOf(xuid2)
			if p.State != "Online" || len(p.Devices) == 0 || p.Devices[0].Titles[0].ID != title2 {
				t.Errorf("heartbeat %d answered 200, beside %d cloaks (%d bytes of %d): a get reads %+v", i+1, n, reserved, max, p)
			}
		}
	})
}

// TestCloakEvictingItsOwnRecordToldOnce: a cloak whose bytes need the
// room of the cloaking user's own record, the only one, evicts it, and
// their friend hears "Scarlett:false" once: an evicted record is told as
// others read it now, cloak and all. The presence budget is cut (in the
// test) to where xuid2's cloak fits in the cloaks' half but not beside
// xuid2's record. Before, the eviction was told from the record as stored,
// uncloaked, and the friend heard xuid2 go twice: once for the cloak, once
// for the eviction (a helper's attack).
func TestCloakEvictingItsOwnRecordToldOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := Must(New(Config{World: rtaWorld()}))
		events := followOnline(t, h) // xuid2 online: the only record
		if r := do(t, h, "PUT", "https://userpresence.xboxlive.com/users/me/state", Token("c0", title1), `{"state":"Cloaked"}`); r.status != http.StatusOK {
			t.Fatalf("another user's cloak: %d", r.status)
		}
		h.world.state.mu.Lock()
		p := &h.world.state.presence
		own := p.m[xuid2].size
		p.maxBytes = 2 * (p.reserved + cloakBytes(xuid2)) // xuid2's cloak fits in half, not beside its record
		if p.bytes+cloakBytes(xuid2) <= p.maxBytes {
			t.Fatalf("budget %d: %d bytes (xuid2's record %d) and the cloak's %d fit", p.maxBytes, p.bytes, own, cloakBytes(xuid2))
		}
		h.world.state.mu.Unlock()
		time.Sleep(15 * time.Second)
		if r := do(t, h, "PUT", "https://userpresence.xboxlive.com/users/xuid("+xuid2+")/state", Token(xuid2, title1), `{"state":"Cloaked"}`); r.status != http.StatusOK {
			t.Fatalf("cloak: %d %s", r.status, r.body)
		}
		synctest.Wait()
		if got := lapseDrain(events); len(got) != 1 || got[0] != `"Scarlett:false"` {
			t.Errorf("xuid2 cloaked where its cloak needs its own record's room: xuid1 heard %q, want [\"Scarlett:false\"] once", got)
		}
		if s := h.world.presenceOf(xuid2).State; s != "Offline" {
			t.Errorf("cloaked: %s", s)
		}
	})
}
