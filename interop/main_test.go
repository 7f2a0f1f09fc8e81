package interop

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them: a
// published client's included, once it is closed.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
