package interop

import (
	"testing"

	"github.com/xblgo/fgrl/internal/leakcheck"
)

// TestMain fails the package's tests if any goroutine outlives them: a
// published client's included, once it is closed (the suites' one leak
// check, which knows what net/http leaves running for a bounded time).
func TestMain(m *testing.M) {
	leakcheck.VerifyTestMain(m)
}
