// Package xblid checks the identifiers Xbox services take: XUIDs (decimal,
// 64-bit) and title IDs (decimal, 32-bit), each written one way only, with
// no leading zero, so that one number is one identifier ("1" and "01" are
// not two accounts). Errors quote the bad value, escaped and clipped.
package xblid

import (
	"errors"
	"strconv"

	"github.com/xblgo/fgrl/internal/safetext"
)

// ErrXUID and ErrTitle are wrapped by every error CheckXUID and CheckTitle
// return.
var (
	ErrXUID  = errors.New("not a XUID (a decimal number that fits in 64 bits, with no leading zero)")
	ErrTitle = errors.New("not a title ID (a decimal number that fits in 32 bits, with no leading zero)")
)

// CheckXUID reports whether s is a XUID.
func CheckXUID(s string) error { return check(s, 64, ErrXUID) }

// CheckTitle reports whether s is a title ID.
func CheckTitle(s string) error { return check(s, 32, ErrTitle) }

func check(s string, bits int, kind error) error {
	// ParseUint in base 10 takes decimal digits only: no sign, space,
	// underscore or prefix; it also refuses "" and what does not fit. A
	// leading zero would make a second spelling of a number.
	if _, err := strconv.ParseUint(s, 10, bits); err != nil || len(s) > 1 && s[0] == '0' {
		return &Error{Value: s, Kind: kind}
	}
	return nil
}

// Error is a bad identifier.
type Error struct {
	Value string
	Kind  error // ErrXUID or ErrTitle
}

// Error returns `"abc" is not a XUID (...)`, the value cut to 28 bytes and
// quoted (safetext.Quote: escaped, at most 114 bytes), the whole at most
// 200.
func (e *Error) Error() string {
	return safetext.Quote(e.Value, 28) + " is " + e.Kind.Error()
}

// Unwrap returns the kind.
func (e *Error) Unwrap() error { return e.Kind }
