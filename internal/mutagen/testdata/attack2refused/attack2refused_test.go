package attack2refused

import "testing"

func TestUp(t *testing.T) {
	if got := Up(2); got != 3 {
		t.Errorf("Up(2) = %d, want 3", got)
	}
}
