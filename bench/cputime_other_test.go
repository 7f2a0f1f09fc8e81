//go:build !unix

package bench

// processCPU is not measured here: BenchmarkLoopbackPaired then reports
// wall time only.
func processCPU() (int64, bool) { return 0, false }
