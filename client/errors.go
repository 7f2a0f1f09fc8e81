package client

import (
	"errors"
	"strconv"
	"strings"

	"github.com/xblgo/fgrl/hresult"
	"github.com/xblgo/fgrl/transport"
)

// ErrNoToken is returned by StaticTokens for a user it has no token for.
var ErrNoToken = errors.New("client: no token for this user")

// Error is a failed call.
type Error struct {
	// HRESULT is what XSAPI would report, such as
	// HTTP_E_STATUS_429_TOO_MANY_REQUESTS or E_XBL_AUTH_NO_TOKEN.
	HRESULT hresult.HRESULT
	// StatusCode is the HTTP status, or 0 when no response was received.
	StatusCode int
	// Service and API name the call, such as "profile" and "GetProfiles".
	Service, API string
	// Message is a short description from the service's error body, when it
	// sent one.
	Message string
	// Throttle holds the details of a throttled call: who refused it, when
	// to retry, and the service's 429 body.
	Throttle *transport.ThrottleError
	// Err is the underlying error, if any.
	Err error
}

// Error returns "client: profile.GetProfiles: 0x80190194 HTTP_E_STATUS_NOT_FOUND
// (HTTP 404): message: cause".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("client: ")
	b.WriteString(e.Service)
	b.WriteString(".")
	b.WriteString(e.API)
	b.WriteString(": ")
	b.WriteString(e.HRESULT.String())
	if e.StatusCode != 0 {
		b.WriteString(" (HTTP ")
		b.WriteString(strconv.Itoa(e.StatusCode))
		b.WriteString(")")
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is e's HRESULT.
func (e *Error) Is(target error) bool {
	h, ok := target.(hresult.HRESULT)
	return ok && h == e.HRESULT
}
