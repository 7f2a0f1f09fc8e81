//go:build !unix

package smallfile

// openNonblock is 0 where opening a file never waits for a writer, or
// where there is no flag to stop it.
const openNonblock = 0
