package proxy

import (
	"testing"

	"github.com/xblgo/fgrl/internal/leakcheck"
)

// TestMain fails the package's tests if any goroutine outlives them: every
// tunnel and server ends with its proxy.
func TestMain(m *testing.M) {
	leakcheck.VerifyTestMain(m)
}
