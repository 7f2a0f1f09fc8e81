//go:build !unix

package scaletest

import "time"

// cpuTime is not read on this system: Ratio judges the wall clock alone.
func cpuTime() time.Duration { return 0 }
