package proxy

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them: every
// tunnel and server ends with its proxy.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
