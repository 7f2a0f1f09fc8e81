//go:build unix

package smallfile

import "syscall"

// openNonblock opens a file without waiting for a writer, should it be a
// FIFO.
const openNonblock = syscall.O_NONBLOCK
