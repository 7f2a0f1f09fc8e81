// Package attack3shift has a non-constant shift of an untyped constant in an
// arithmetic expression whose type is another package's (os.FileMode, a
// uint32): Go computes 1 << s in that type, so for s = 32 it is 0 and the
// quotient 0.
package attack3shift

import "os"

// HalfBit returns half of bit s of a file mode: 0 when s is 32 or more.
func HalfBit(s uint) os.FileMode { return os.FileMode(1 << s / 2) }
