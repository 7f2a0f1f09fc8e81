package whatif

// SetParts sets the parts r replays in at once (GOMAXPROCS by default).
func SetParts(r *Replayer, n int) { r.parts = n }

// KeptBytes is what r counts against MaxURLBytes.
func KeptBytes(r *Replayer) int { return r.bytes }

// SetMaxURLBytes sets the bound of MaxURLBytes until the test ends.
func SetMaxURLBytes(t interface{ Cleanup(func()) }, n int) {
	old := maxURLBytes
	maxURLBytes = n
	t.Cleanup(func() { maxURLBytes = old })
}
