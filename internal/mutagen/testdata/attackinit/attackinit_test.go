package attackinit

import "testing"

func TestValues(t *testing.T) {
	if got := Double(); got != 20 {
		t.Errorf("Double() = %d, want 20", got)
	}
	if got := Next(); got != 11 {
		t.Errorf("Next() = %d, want 11", got)
	}
	if got := Triple(2); got != 6 {
		t.Errorf("Triple(2) = %d, want 6", got)
	}
}
