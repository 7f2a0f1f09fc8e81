// Package leakcheck is the test suites' one goroutine-leak check: goleak's,
// with what the standard library itself leaves running for a bounded time
// after a test has closed everything it started.
package leakcheck

import (
	"testing"

	"go.uber.org/goleak"
)

// Options are goleak's options for this project's tests. A net/http server
// connection that answered with "Connection: close" lingers in
// closeWriteAndWait for 500 ms after its handler returns (so that the client
// reads the answer before the reset); it ends by itself and is no leak.
func Options() []goleak.Option {
	return []goleak.Option{goleak.IgnoreAnyFunction("net/http.(*conn).closeWriteAndWait")}
}

// VerifyTestMain runs m's tests and fails them if a goroutine outlives them.
func VerifyTestMain(m *testing.M) {
	goleak.VerifyTestMain(m, Options()...)
}
