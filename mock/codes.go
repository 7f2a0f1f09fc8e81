package mock

import (
	"crypto/sha256"
	"encoding/base64"
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

// Codes and refresh tokens are bound to what they were issued for, as
// RFC 6749 asks (4.1.3: a code is redeemed only by the client it was
// issued to, at the redirect URI it was sent to; 6: a refresh token only
// by its client; RFC 8628 3.4 with RFC 6749 3.2.1: a device code is polled
// for by its client) and as the Microsoft identity platform says of its
// refresh tokens ("bound to a combination of user and client"). Each
// value bound is a bindTag in the token's kind, under its signature.

// bindTagLen is the length of a bindTag.
const bindTagLen = 12

// bindTag is a value a code or token is bound to (a client ID, a redirect
// URI, a PKCE challenge) as its kind holds it: 9 bytes of its SHA-256 in
// base64url, free of the '.' and '~' a token's parts are split at.
func bindTag(v string) string {
	sum := sha256.Sum256([]byte(v))
	return base64.RawURLEncoding.EncodeToString(sum[:9])
}

// boundKind is the kind of a token bound to values: prefix, '-', and a
// bindTag of each.
func boundKind(prefix string, values ...string) string {
	var b strings.Builder
	b.Grow(len(prefix) + 1 + bindTagLen*len(values))
	b.WriteString(prefix + "-")
	for _, v := range values {
		b.WriteString(bindTag(v))
	}
	return b.String()
}

// mintCode mints a one-time code for xuid, valid until exp, bound to
// values (boundKind): a token whose kind carries the code's serial
// ("lc-...~42").
func (s *signIn) mintCode(prefix, xuid string, exp time.Time, values ...string) string {
	s.mu.Lock()
	n := s.codes.issue()
	s.mu.Unlock()
	return s.mint(boundKind(prefix, values...)+"~"+strconv.FormatUint(n, 10), xuid, exp)
}

// codeCheck is what presentCode found of a code.
type codeCheck struct {
	xuid string
	// unknown: not a code of the kind this mock minted, expired, or issued
	// more than codeWindow codes ago.
	unknown bool
	// unbound is 1 + the index of the first value given that the code was
	// not issued for; 0 when it was issued for all.
	unbound int
	before  uint8 // how often it was presented before (0 the first time)
}

// presentCode checks a one-time code of prefix minted by this mock, not
// expired at now and issued for values (in mintCode's order), and if it
// is, notes that it was presented. A code presented with other values is
// not noted: its client may still redeem it.
func (s *signIn) presentCode(code, prefix string, now time.Time, values ...string) codeCheck {
	k, _, _ := strings.Cut(code, ".")
	base, serial, found := strings.Cut(k, "~")
	n, err := strconv.ParseUint(serial, 10, 64)
	tags, ok := strings.CutPrefix(base, prefix+"-")
	if !found || !ok || err != nil || len(tags) != bindTagLen*len(values) {
		return codeCheck{unknown: true}
	}
	xuid, ok := s.check(code, k, now)
	if !ok {
		return codeCheck{unknown: true}
	}
	for i, v := range values {
		if tags[i*bindTagLen:(i+1)*bindTagLen] != bindTag(v) {
			return codeCheck{xuid: xuid, unbound: i + 1}
		}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	before, ok := s.codes.present(n)
	return codeCheck{xuid: xuid, unknown: !ok, before: before}
}
