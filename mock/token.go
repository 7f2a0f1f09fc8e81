package mock

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/maphash"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/xblgo/fgrl/internal/xblauth"
	"github.com/xblgo/fgrl/limits"
)

// Token returns an Authorization header value that the mock accepts for a
// user (xuid) playing a title: "XBL3.0 x=<userhash>;<token>". The userhash is
// derived from the xuid, so it differs per user as real ones do; the token
// names the xuid and title and carries a checksum, so a tampered token is
// refused with 401. It is not a secret and grants nothing outside the mock.
func Token(xuid, titleID string) string { return mintToken(xuid, titleID, "") }

// mintToken is Token with a serial number, so that each sign-in gets a token of
// its own, as real XSTS tokens differ on every issue; serial "" is Token's.
// A serial "N.E" also carries the token's expiry, E in Unix seconds
// (signInToken); the checksum covers it.
func mintToken(xuid, titleID, serial string) string {
	raw := xuid + "\x00" + titleID
	if serial != "" {
		raw += "\x00" + serial
	}
	payload := base64.RawURLEncoding.EncodeToString([]byte(raw))
	return "XBL3.0 x=" + UserHash(xuid) + ";" + tokenPrefix + payload + "." + checksum(payload)
}

// UserHash returns the userhash the mock gives xuid: a decimal number derived
// from it, like the numeric userhashes of real tokens.
func UserHash(xuid string) string {
	return strconv.FormatUint(userHashOf(xuid), 10)
}

func userHashOf(xuid string) uint64 {
	var buf [64]byte // on the stack for XUIDs of ordinary size
	sum := sha256.Sum256(append(append(buf[:0], "uhs:"...), xuid...))
	return binary.BigEndian.Uint64(sum[:8]) >> 1
}

const tokenPrefix = "mock1."

func checksum(payload string) string {
	sum := checksumOf(payload)
	return hex.EncodeToString(sum[:])
}

// checksumOf is the first 8 bytes of the payload's digest.
func checksumOf(payload string) [8]byte {
	var buf [128]byte // on the stack for tokens of ordinary size
	sum := sha256.Sum256(append(append(buf[:0], "fgrl-mock:"...), payload...))
	return [8]byte(sum[:8])
}

// sumMatches reports whether hex is the payload's checksum, without
// building the expected string.
func sumMatches(payload, hexSum string) bool {
	var got [8]byte
	if len(hexSum) != 2*len(got) {
		return false
	}
	var hb [16]byte
	if _, err := hex.Decode(got[:], append(hb[:0], hexSum...)); err != nil {
		return false
	}
	return got == checksumOf(payload)
}

// identity is the caller a token names.
type identity struct {
	xuid, title, userhash string
	// expires is the last second (Unix) the token is taken: for one the
	// sign-in minted, its NotAfter's, whatever instant that is (before
	// 1970 on a clock set there); neverExpires for one Token minted.
	expires int64
	// party is the relying party of an XSTS token the sign-in issued a
	// user for one other than the Xbox services' own (xboxlive.com): a
	// title service's (elsewhere), taken at no Xbox service, or one of
	// the Xbox services' others (licensing, music, accounts), taken only
	// at the hosts whose relying party it is (nsalParty). "" for a token
	// of the Xbox services' own, or one Token minted.
	party string
}

// elsewhere is identity.party of a token issued for a title service's
// relying party.
const elsewhere = "elsewhere"

// partyMarks are the marks that end the serial of a token issued for a
// relying party other than the Xbox services' own, by that party.
var partyMarks = map[string]string{
	"x": elsewhere,
	"l": "http://licensing.xboxlive.com",
	"m": "http://music.xboxlive.com",
	"a": "http://accounts.xboxlive.com",
}

// partyMark returns the mark of a token issued for the relying party rp:
// "" for the Xbox services' own, "x" for one not the Xbox services'.
func partyMark(rp string) string {
	if rp == "http://xboxlive.com" || rp == "https://xboxlive.com" {
		return ""
	}
	for mark, party := range partyMarks {
		if party == rp {
			return mark
		}
	}
	return "x"
}

var errToken = errors.New("token is not one minted by mock.Token")

// neverExpires is the expiry of a token Token minted: no second is after
// it.
const neverExpires = math.MaxInt64

// maxIDBytes bounds a token's xuid and title: they become the FGRL keys the
// mock holds (up to its key cap), so their size bounds its memory. Real
// ones are at most 20 digits.
const maxIDBytes = 64

// parseToken reads an Authorization header minted by Token.
func parseToken(h string) (identity, error) {
	uhs, tok, err := xblauth.Parse(h)
	if err != nil {
		return identity{}, err
	}
	rest, ok := strings.CutPrefix(tok, tokenPrefix)
	payload, sum, ok2 := strings.Cut(rest, ".")
	if !ok || !ok2 || !sumMatches(payload, sum) {
		return identity{}, errToken
	}
	var rb [256]byte // on the stack for tokens of ordinary size: raw's one copy is the identity's
	raw := rb[:0]
	if n := base64.RawURLEncoding.DecodedLen(len(payload)); n > len(rb) {
		raw = make([]byte, 0, n)
	}
	raw, err = base64.RawURLEncoding.AppendDecode(raw, []byte(payload))
	if err != nil {
		return identity{}, errToken
	}
	xuid, title, ok := strings.Cut(string(raw), "\x00")
	title, serial, _ := strings.Cut(title, "\x00")
	var ub [20]byte
	if !ok || xuid == "" || title == "" || len(xuid) > maxIDBytes || len(title) > maxIDBytes || len(serial) > maxIDBytes ||
		string(strconv.AppendUint(ub[:0], userHashOf(xuid), 10)) != uhs {
		return identity{}, errToken
	}
	expires, party := int64(neverExpires), ""
	if _, e, dated := strings.Cut(serial, "."); dated {
		e, mark, marked := strings.Cut(e, ".")
		if party = partyMarks[mark]; marked && party == "" {
			return identity{}, errToken
		}
		if expires, err = strconv.ParseInt(e, 10, 64); err != nil {
			return identity{}, errToken
		}
	}
	return identity{xuid: xuid, title: title, userhash: uhs, expires: expires, party: party}, nil
}

// signInToken mints the XSTS token a sign-in gives xuid playing title,
// the serial-th: a token of its own that expires at notAfter (to the
// second below; it is refused from the second after), for the relying
// party rp.
func signInToken(xuid, title string, serial uint64, notAfter time.Time, rp string) string {
	s := strconv.FormatUint(serial, 10) + "." + strconv.FormatInt(notAfter.Unix(), 10)
	if mark := partyMark(rp); mark != "" {
		s += "." + mark
	}
	return mintToken(xuid, title, s)
}

// errElsewhere refuses, at an Xbox service, a user's XSTS token issued for
// another relying party than the host's (nsalParty): such tokens are for
// their relying party alone.
var errElsewhere = errors.New("the XSTS token was issued for another relying party")

// errExpired is the refusal of a token the sign-in minted, used past its
// NotAfter.
var errExpired = errors.New("the XSTS token has expired")

// caller is the identity of the token auth, a token Token or the
// sign-in minted, presented at host: errToken for one it did not,
// errElsewhere for one issued for another relying party than host's,
// errExpired for one the sign-in minted whose NotAfter has passed by now
// (read only for such a token).
func (tc *tokenCache) caller(auth, host string, now func() time.Time) (identity, error) {
	id, err := tc.identity(auth)
	switch {
	case err != nil:
		return id, err
	case id.party != "" && (id.party == elsewhere || id.party != nsalParty(strings.ToLower(hostOnly(host)))):
		return identity{}, errElsewhere
	case id.expires != neverExpires && now().Unix() > id.expires:
		return identity{}, errExpired
	}
	return id, nil
}

// refuseExpired answers 401 for an expired token, what names what it is.
// Microsoft's documentation says "an indication appears in the
// www-authenticate header of the response that the token is expired";
// its exact form is not published.
func refuseExpired(w http.ResponseWriter, what string) {
	w.Header().Set("WWW-Authenticate", `XBL3.0 error="token_expired"`)
	writeError(w, http.StatusUnauthorized, "Unauthorized", what+" has expired")
}

// refuseCaller answers 401 for the token tokenCache.caller refused with
// err: refuseExpired's answer for an expired one, else one naming why.
func refuseCaller(w http.ResponseWriter, err error) {
	if err == errExpired {
		refuseExpired(w, "the XSTS token")
		return
	}
	writeError(w, http.StatusUnauthorized, "Unauthorized", err.Error())
}

// authenticate is the pipeline's authenticate stage: the caller the
// request's Authorization names, or false once it has answered: a token
// Token minted, or an X-token of the service sign-in (boundIdentity,
// s2sauth.go), else 401.
func (h *Handler) authenticate(x *exchange, rule *limits.Rule) (identity, bool) {
	auth := x.r.Header.Get("Authorization")
	id, err := h.tokens.caller(auth, x.r.Host, h.cfg.now)
	if err == nil {
		return id, true
	}
	if uhs, tok, perr := xblauth.Parse(auth); perr == nil && (strings.HasPrefix(tok, "xs.") || strings.HasPrefix(tok, "xd.")) {
		return h.boundIdentity(x, rule, tok[:2], uhs, tok)
	}
	refuseCaller(x.w, err)
	return identity{}, false
}

// Bounds of a Handler's tokenCache: tokenCacheSets sets of two entries,
// each holding a token of at most maxCachedAuth bytes and the identity
// parsed from it (its decoded payload, at most 194 bytes, and a userhash
// of at most 20). An entry is then at most 616 bytes of heap (64 for
// itself, 320, 208 and 24 for its strings), and the cache 5 MiB besides
// its 128 KiB of sets, however many tokens come; ordinary tokens (88
// bytes) make entries of about 240. The longest token Token mints, with a
// serial and every id at maxIDBytes, is 311 bytes. A full set takes one
// token in tokenAdmit of those it misses.
const (
	tokenCacheSets = 4096
	maxCachedAuth  = 320
	tokenAdmit     = 8
)

// tokenCache remembers the identities parseToken gave the tokens it
// accepted, so that a token sent again is not checked again (two SHA-256
// digests and a base64 decoding on every request otherwise).
//
// A token is found by its exact text only: its hash picks a set, and an
// entry's text is compared whole, so a text gets the identity parseToken
// gives that text or none. parseToken reads nothing but the text (a
// sign-in token's expiry is in its text, and tokenCache.caller compares it
// with the clock at every request; no state of the mock refuses a token
// later), so an entry never goes stale and nothing has to forget one. Only tokens
// parseToken accepted are kept: a refused one is checked every time.
//
// It is safe for concurrent use: a slot is an atomic pointer to an entry
// that never changes, and a reader that misses an entry being replaced
// parses the token itself.
type tokenCache struct {
	seed maphash.Seed
	sets []tokenSet
}

// tokenSet is one set of the cache: two entries, and their tokens' hashes,
// so that a token not held reads no entry (on a server of many users,
// most are not, and each entry read is memory no core has cached). A
// hash only filters: an entry is taken when its text is the token's.
type tokenSet struct {
	hashes  [2]atomic.Uint64
	entries [2]atomic.Pointer[tokenEntry]
}

// tokenEntry is a token's text and its identity, in strings of their own
// (a copy of the text, the decoded payload, a copy of the userhash).
type tokenEntry struct {
	auth string
	id   identity
}

// newTokenCache returns an empty cache of n sets.
func newTokenCache(n int) *tokenCache {
	return &tokenCache{seed: maphash.MakeSeed(), sets: make([]tokenSet, n)}
}

// identity is parseToken(auth), from the cache when auth was accepted
// before.
func (tc *tokenCache) identity(auth string) (identity, error) {
	if len(auth) > maxCachedAuth {
		return parseToken(auth)
	}
	h := maphash.String(tc.seed, auth)
	set := &tc.sets[h%uint64(len(tc.sets))]
	for i := range set.entries {
		if set.hashes[i].Load() != h {
			continue
		}
		if e := set.entries[i].Load(); e != nil && e.auth == auth {
			return e.id, nil
		}
	}
	id, err := parseToken(auth)
	if err != nil {
		return identity{}, err
	}
	var i uint64
	switch {
	case set.entries[0].Load() == nil:
	case set.entries[1].Load() == nil:
		i = 1
	case rand.Uint32()%tokenAdmit != 0:
		// A full set takes one token of tokenAdmit it misses: where
		// tokens come back, one soon has its entry; where they hardly
		// do (many users), few entries are made for nothing.
		return id, nil
	default:
		i = h >> 63 // chosen by the token, so that of three in turn on a set one keeps its entry
	}
	// Copies, so that an entry holds no part of a larger string (the
	// caller's header may be a slice of anything) and its bytes are
	// bounded; the xuid and title are the token's payload's own.
	e := &tokenEntry{auth: strings.Clone(auth), id: id}
	e.id.userhash = strings.Clone(id.userhash)
	set.entries[i].Store(e)
	set.hashes[i].Store(h)
	return id, nil
}
