package mock

import (
	"testing"

	"github.com/xblgo/fgrl/internal/leakcheck"
)

// TestMain fails the package's tests if any goroutine outlives them.
func TestMain(m *testing.M) {
	leakcheck.VerifyTestMain(m)
}
