package hresult

import "errors"

// Reporter is an error that reports the HRESULT XSAPI would give for it. The
// module's error types implement it (transport.ThrottleError,
// client.Error, client.SignInError), as HRESULT itself does, so Of and errors.Is find the code
// anywhere in a chain of wrapped errors.
type Reporter interface {
	error
	HRESULT() HRESULT
}

// HRESULT returns h, so that a bare code is a Reporter too.
func (h HRESULT) HRESULT() HRESULT { return h }

// Is reports whether the Reporter r reports target, for Reporters to use in
// their own Is method: errors.Is(err, code) then holds through any wrapping.
func Is(r Reporter, target error) bool {
	h, ok := target.(HRESULT)
	return ok && h == r.HRESULT()
}

// Of returns the HRESULT that describes err, so that any error can be reported
// the way XSAPI reports it:
//
//   - nil: S_OK
//   - a Reporter anywhere in the chain (an HRESULT, a *transport.ThrottleError,
//     a *client.Error): its HRESULT
//   - context.Canceled: E_ABORT
//   - context.DeadlineExceeded, or a net.Error whose Timeout is true:
//     HTTP_E_STATUS_REQUEST_TIMEOUT
//   - the network itself is down (ENETDOWN): E_HC_NO_NETWORK
//   - errors.ErrUnsupported: E_NOT_SUPPORTED
//   - anything else, including every other transport failure: E_FAIL, as
//     libHttpClient reports them on Windows and GDK
func Of(err error) HRESULT {
	if err == nil {
		return S_OK
	}
	var r Reporter
	if errors.As(err, &r) {
		return r.HRESULT()
	}
	return fromGo(err)
}
