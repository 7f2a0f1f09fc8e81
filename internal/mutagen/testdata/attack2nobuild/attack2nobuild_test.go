package attack2nobuild

import "testing"

func TestInc(t *testing.T) {
	var s string = Inc(1)
	if s != "2" {
		t.Errorf("Inc(1) = %s", s)
	}
}
