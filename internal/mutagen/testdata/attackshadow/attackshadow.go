// Package attackshadow has a mutant in a function whose parameter shadows the
// name of the package's type that its arithmetic has.
package attackshadow

type level int

// Up returns the level above: the parameter named level shadows the type.
func Up(level level) level { return level + 1 }

// Down returns the level below, with no shadowing.
func Down(l level) level { return l - 1 }
