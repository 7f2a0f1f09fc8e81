// Package attack2refused has one mutant, which the compiler refuses: Up's
// parameter named level shadows the type level that the mutant's helper
// call names.
package attack2refused

type level int

// Up returns the level above.
func Up(level level) level { return level + 1 }
