package whatif

// SetParts sets the parts r replays in at once (GOMAXPROCS by default).
func SetParts(r *Replayer, n int) { r.parts = n }
