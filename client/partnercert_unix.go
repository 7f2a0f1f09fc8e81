//go:build unix

package client

import "syscall"

// openNonblock opens a file without waiting for a writer, should it be a
// FIFO (readSmall).
const openNonblock = syscall.O_NONBLOCK
