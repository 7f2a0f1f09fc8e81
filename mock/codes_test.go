package mock

import "testing"

// TestOneTimeWindow: a code is refused once used, and once codeWindow
// later codes were issued, used or not; a serial never issued is refused.
func TestOneTimeWindow(t *testing.T) {
	var o oneTime
	first := o.issue()
	unused := o.issue()
	if before, ok := o.present(first); before != 0 || !ok {
		t.Fatalf("the first presentation: %d, %v", before, ok)
	}
	if before, ok := o.present(first); before != 1 || !ok {
		t.Errorf("the second presentation: %d, %v; want 1 before", before, ok)
	}
	for range codeWindow - 1 {
		o.issue()
	}
	if before, ok := o.present(unused); before != 0 || !ok {
		t.Errorf("an unused code codeWindow-1 codes ago: %d, %v; want good", before, ok)
	}
	o.issue()
	for _, n := range []uint64{first, unused} {
		if _, ok := o.present(n); ok {
			t.Errorf("code %d, more than codeWindow codes ago, was taken", n)
		}
	}
	for _, n := range []uint64{0, o.last + 1} {
		if _, ok := o.present(n); ok {
			t.Errorf("serial %d, never issued, was taken", n)
		}
	}
}

func BenchmarkOneTime(b *testing.B) {
	var o oneTime
	b.ReportAllocs()
	for b.Loop() {
		o.present(o.issue())
	}
}
