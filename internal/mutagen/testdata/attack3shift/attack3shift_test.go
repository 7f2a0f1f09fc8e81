package attack3shift

import "testing"

func TestHalfBit(t *testing.T) {
	if got := HalfBit(32); got != 0 {
		t.Errorf("HalfBit(32) = %v, want 0 (1<<32 is 0 in a uint32)", uint32(got))
	}
	if got := HalfBit(3); got != 4 {
		t.Errorf("HalfBit(3) = %v, want 4", uint32(got))
	}
}
