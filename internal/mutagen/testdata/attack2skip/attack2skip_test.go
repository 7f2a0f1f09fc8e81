package attack2skip

import "testing"

func TestSkipped(t *testing.T) {
	if Inc(1) != 2 {
		t.Skip("Inc is not itself")
	}
	t.Skip("not checked here")
}
