// Package mocktest is the mock's checks as one-line test assertions: a Go
// test fails when the code under test was throttled, when what the mock
// saw would fail certification by the trace analyzer's rules (with its
// findings in the message), or when a call did not happen as often as
// expected. Each is mock.Handler.Check; tests in other languages run the
// same checks through the admin API (POST /_fgrl/api/check) or xblcall
// check.
package mocktest

import (
	"strings"
	"testing"

	"github.com/xblgo/fgrl/mock"
)

// Check fails t with every failure of h.Check(o), one a line.
func Check(t testing.TB, h *mock.Handler, o mock.CheckOptions) {
	t.Helper()
	res, err := h.Check(o)
	switch {
	case err != nil:
		t.Errorf("mock check: %v", err)
	case !res.OK:
		t.Errorf("mock check failed:\n\t%s", strings.Join(res.Failures, "\n\t"))
	}
}

// NoThrottled fails t when the mock answered any call 429.
func NoThrottled(t testing.TB, h *mock.Handler) {
	t.Helper()
	Check(t, h, mock.CheckOptions{No429: true})
}

// Certifiable fails t when the trace analyzer's rules fail what the mock
// saw: calls past a limit, calls before a 429's Retry-After had passed,
// 429s in a row.
func Certifiable(t testing.TB, h *mock.Handler) {
	t.Helper()
	Check(t, h, mock.CheckOptions{Certify: true})
}

// Called fails t unless f matches exactly n calls the mock saw. A call is
// seen once it has ended (mock.Handler.Calls): one in progress is not
// counted yet. A call whose URL the record clipped before f's path prefix
// ended, which f may or may not match, fails t (mock.CallFilter).
func Called(t testing.TB, h *mock.Handler, f mock.CallFilter, n int) {
	t.Helper()
	Check(t, h, mock.CheckOptions{Expect: []mock.Expectation{{CallFilter: f, Count: n}}})
}
