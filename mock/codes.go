package mock

import (
	"strconv"
	"strings"
	"time"
)

// One-time codes: login.live.com's and the identity platform's
// authorization codes, and device codes. Each code carries a serial
// number, issued once, under the signature of the token it is (mint); the
// mock notes, per serial, how often the code was presented. A code is
// refused once used, and also once codeWindow later codes have been
// issued: its serial has then left the window, and a serial is never
// issued again, so a used code stays refused for ever in codeWindow bytes,
// however many codes follow. Codes expire in minutes besides (their
// signed expiry), so the window only ever ends a code that a flood of
// sign-ins outran.

// codeWindow is how many of the latest codes are remembered, one byte
// each.
const codeWindow = 1 << 16

// oneTime is the record of the one-time codes issued. The zero value is
// ready; it is guarded by signIn.mu.
type oneTime struct {
	last  uint64  // the serial of the latest code issued; serials start at 1
	times []uint8 // by serial % codeWindow: how often the code was presented (at most 255)
}

// issue returns a new code's serial. The caller holds signIn.mu.
func (o *oneTime) issue() uint64 {
	if o.times == nil {
		o.times = make([]uint8, codeWindow)
	}
	o.last++
	o.times[o.last%codeWindow] = 0
	return o.last
}

// present notes that the code numbered n was presented and returns how
// often it was before; ok is false for a serial not issued, or issued
// more than codeWindow codes ago. The caller holds signIn.mu.
func (o *oneTime) present(n uint64) (before uint8, ok bool) {
	if n == 0 || n > o.last || o.last-n >= codeWindow {
		return 0, false
	}
	before = o.times[n%codeWindow]
	if before < 255 {
		o.times[n%codeWindow]++
	}
	return before, true
}

// mintCode mints a one-time code of kind for xuid, valid until exp: a
// token whose kind carries the code's serial ("lc-...~42").
func (h *Handler) mintCode(kind, xuid string, exp time.Time) string {
	s := &h.signIn
	s.mu.Lock()
	n := s.codes.issue()
	s.mu.Unlock()
	return h.mint(kind+"~"+strconv.FormatUint(n, 10), xuid, exp)
}

// presentCode checks a one-time code of kind minted by this mock and not
// expired at now, notes that it was presented, and returns its XUID and
// how often it was presented before (0 the first time). ok is false for
// anything else, or a code beyond the window.
func (h *Handler) presentCode(code, kind string, now time.Time) (xuid string, before uint8, ok bool) {
	k, _, _ := strings.Cut(code, ".")
	base, serial, found := strings.Cut(k, "~")
	n, err := strconv.ParseUint(serial, 10, 64)
	if !found || base != kind || err != nil {
		return "", 0, false
	}
	if xuid, ok = h.check(code, k, now); !ok {
		return "", 0, false
	}
	s := &h.signIn
	s.mu.Lock()
	defer s.mu.Unlock()
	before, ok = s.codes.present(n)
	return xuid, before, ok
}
