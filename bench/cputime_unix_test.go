//go:build unix

package bench

import "golang.org/x/sys/unix"

// processCPU returns the CPU time the process has used, in nanoseconds, from
// the scheduler's own accounting (CLOCK_PROCESS_CPUTIME_ID), and whether
// the system gave it.
func processCPU() (int64, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return ts.Nano(), true
}
