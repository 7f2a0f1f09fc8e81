// Package attackkeys has lines whose text repeats: in methods of different
// receivers with one name, in closures of one function, in two init
// functions, in generic receivers, and in package-level closures.
package attackkeys

type A struct{}
type B struct{}

// Set is generic.
type Set[T comparable] struct{ xs []T }

// List is generic in two.
type List[K comparable, V any] struct{ ks []K }

var lo, hi int

func (A) Cmp(x, y int) bool {
	return x < y
}

func (B) Cmp(x, y int) bool {
	return x < y
}

func (s *Set[T]) Cmp(x, y int) bool {
	return x < y
}

func (l *List[K, V]) Cmp(x, y int) bool {
	return x < y
}

// Two closures with the same line, and the line itself once more.
func Pair(x, y int) (bool, bool, bool) {
	f := func() bool {
		return x < y
	}
	g := func() bool {
		return x < y
	}
	return f(), g(), x < y
}

func init() {
	if lo < hi {
		lo++
	}
}

func init() {
	if lo < hi {
		lo++
	}
}

var first = func(x, y int) bool {
	return x < y
}

var second = func(x, y int) bool {
	return x < y
}
