package attack2baseline

import "testing"

func TestScale(t *testing.T) {
	if got := Scale(2); got != 2 {
		t.Errorf("Scale(2) = %v, want 2", got)
	}
}
