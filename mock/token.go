package mock

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"strings"

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
}

var errToken = errors.New("token is not one minted by mock.Token")

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
	raw, err := base64.RawURLEncoding.DecodeString(payload)
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
	return identity{xuid: xuid, title: title, userhash: uhs}, nil
}

// authenticate is the pipeline's authenticate stage: the caller the
// request's Authorization names, or false once it has answered: a token
// Token minted, or an X-token of the service sign-in (boundIdentity,
// s2sauth.go), else 401.
func (h *Handler) authenticate(x *exchange, rule *limits.Rule) (identity, bool) {
	auth := x.r.Header.Get("Authorization")
	id, err := parseToken(auth)
	if err == nil {
		return id, true
	}
	if uhs, tok, perr := xblauth.Parse(auth); perr == nil && (strings.HasPrefix(tok, "xs.") || strings.HasPrefix(tok, "xd.")) {
		return h.boundIdentity(x, rule, tok[:2], uhs, tok)
	}
	writeError(x.w, http.StatusUnauthorized, "Unauthorized", err.Error())
	return identity{}, false
}
