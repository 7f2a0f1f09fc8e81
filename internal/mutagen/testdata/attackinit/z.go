package attackinit

// Triple is reached by a test as it runs, the usual way.
func Triple(x int) int { return x * 3 }
