package sample

// Three is a second file of the package, with nothing to mutate.
func Three() int { return 3 }
