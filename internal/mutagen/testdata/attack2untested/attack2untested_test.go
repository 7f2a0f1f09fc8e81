package attack2untested

import "testing"

func TestNothing(t *testing.T) {}
