package attack3const

import (
	"testing"
	"time"
)

func TestAll(t *testing.T) {
	if Part(2) != 2 {
		t.Error("Part")
	}
	if Wait(time.Second) != 3*time.Second {
		t.Error("Wait")
	}
	if Cond(5) != 4 {
		t.Error("Cond")
	}
	if Gen(2.0) != 6 || Gen(2) != 6 {
		t.Error("Gen")
	}
}
