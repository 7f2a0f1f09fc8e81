package attackshadow

import "testing"

func TestLevels(t *testing.T) {
	if got := Up(2); got != 3 {
		t.Errorf("Up(2) = %d, want 3", got)
	}
	if got := Down(2); got != 1 {
		t.Errorf("Down(2) = %d, want 1", got)
	}
}
