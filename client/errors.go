package client

import (
	"errors"
	"strconv"
	"strings"

	"github.com/xblgo/fgrl/hresult"
	"github.com/xblgo/fgrl/internal/safetext"
)

// maxCause bounds the text of an Error's cause in Error(), escaped.
const maxCause = 400

// ErrNoToken is returned by StaticTokens for a user it has no token for.
var ErrNoToken = errors.New("client: no token for this user")

// Error is a failed call: which call, the HRESULT XSAPI would report, the
// HTTP status and the service's message. A throttled call wraps the
// transport's *transport.ThrottleError (who refused it, when to retry, the
// 429 body), which errors.As finds:
//
//	var te *transport.ThrottleError
//	if errors.As(err, &te) { wait(te.Wait) }
//
// Error is an hresult.Reporter: errors.Is(err, code) and hresult.Of(err)
// hold for its HRESULT through any wrapping.
type Error struct {
	// StatusCode is the HTTP status, or 0 when no response was received.
	StatusCode int
	// Service and API name the call, such as "profile" and "GetProfiles".
	Service, API string
	// Message is a short description: the service's error message, or what
	// was wrong with the arguments or the answer.
	Message string
	// Err is the underlying error, if any.
	Err error

	code hresult.HRESULT
}

// HRESULT returns what XSAPI would report, such as
// HTTP_E_STATUS_429_TOO_MANY_REQUESTS or E_XBL_AUTH_NO_TOKEN.
func (e *Error) HRESULT() hresult.HRESULT { return e.code }

// Error returns "client: profile.GetProfiles: 0x80190194 HTTP_E_STATUS_NOT_FOUND
// (HTTP 404): message: cause".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("client: ")
	b.WriteString(e.Service)
	b.WriteString(".")
	b.WriteString(e.API)
	b.WriteString(": ")
	b.WriteString(e.code.String())
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
		b.WriteString(safetext.Clip(e.Err.Error(), maxCause)) // it may quote the server's text (net/http's header errors, a redirect's URL)
	}
	return b.String()
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is e's HRESULT.
func (e *Error) Is(target error) bool { return hresult.Is(e, target) }
