package attack2freekill

import "testing"

func TestGrow(t *testing.T) {
	if got := Grow(4); got < 4 {
		t.Errorf("Grow(4) = %v, want at least 4", got)
	}
}
