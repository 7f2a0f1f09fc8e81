package hresult

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// Error is a failed call described the way XSAPI describes it: an HRESULT, the
// HTTP status when a response was received, a short message and, for throttled
// calls, how long to wait before retrying.
//
// errors.Is(err, code) holds when err is or wraps an *Error whose Code is code,
// so callers match on HRESULT constants through any wrapping, including the
// *url.Error that http.Client returns.
type Error struct {
	// Code is the HRESULT; for an HTTP failure it is FromStatus(StatusCode).
	Code HRESULT
	// StatusCode is the HTTP status, or 0 when no response was received.
	StatusCode int
	// Message is a short human-readable description; it never holds a token.
	Message string
	// RetryAfter is the wait the service asked for (Retry-After), or 0.
	RetryAfter time.Duration
	// Err is the underlying cause, if any; Unwrap returns it.
	Err error
}

// Error returns "hresult: 0x801901AD HTTP_E_STATUS_429_TOO_MANY_REQUESTS (HTTP 429):
// message (retry after 3s): cause", leaving out the parts that are empty.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("hresult: ")
	b.WriteString(e.Code.String())
	if e.StatusCode != 0 {
		b.WriteString(" (HTTP ")
		b.WriteString(strconv.Itoa(e.StatusCode))
		b.WriteString(")")
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.RetryAfter > 0 {
		b.WriteString(" (retry after ")
		b.WriteString(e.RetryAfter.String())
		b.WriteString(")")
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is the HRESULT e carries.
func (e *Error) Is(target error) bool {
	h, ok := target.(HRESULT)
	return ok && h == e.Code
}

// FromResponse returns an *Error for an HTTP status, or nil for a status that
// FromStatus maps to S_OK.
func FromResponse(status int, message string, retryAfter time.Duration) error {
	h := FromStatus(status)
	if h.Succeeded() {
		return nil
	}
	return &Error{Code: h, StatusCode: status, Message: message, RetryAfter: retryAfter}
}

// Of returns the HRESULT that describes err, so that any error can be reported
// the way XSAPI reports it:
//
//   - nil: S_OK
//   - an HRESULT or *Error anywhere in the chain: its code
//   - context.Canceled: E_ABORT
//   - context.DeadlineExceeded, or a net.Error whose Timeout is true:
//     HTTP_E_STATUS_REQUEST_TIMEOUT
//   - a failure to reach the network at all (no route, network unreachable,
//     DNS resolution failure): E_HC_NO_NETWORK
//   - errors.ErrUnsupported: E_NOT_SUPPORTED
//   - anything else: E_FAIL
func Of(err error) HRESULT {
	if err == nil {
		return S_OK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	var h HRESULT
	if errors.As(err, &h) {
		return h
	}
	return fromGo(err)
}
