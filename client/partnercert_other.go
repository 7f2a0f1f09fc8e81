//go:build !unix

package client

// openNonblock is 0 where opening a file never waits for a writer, or
// where there is no flag to stop it (readSmall).
const openNonblock = 0
