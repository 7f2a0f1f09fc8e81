package hresult

import (
	"context"
	"errors"
	"net"
	"syscall"
)

// fromGo maps standard-library errors; see Of.
func fromGo(err error) HRESULT {
	switch {
	case errors.Is(err, context.Canceled):
		return E_ABORT
	case errors.Is(err, context.DeadlineExceeded):
		return HTTP_E_STATUS_REQUEST_TIMEOUT
	case errors.Is(err, errors.ErrUnsupported):
		return E_NOT_SUPPORTED
	case noNetwork(err):
		return E_HC_NO_NETWORK
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return HTTP_E_STATUS_REQUEST_TIMEOUT
	}
	return E_FAIL
}

// noNetwork reports whether err says the network itself is down, as
// opposed to a host, a route or a name server that failed: only that is "no
// network", which libHttpClient never retries. Unreachable hosts and
// networks and DNS failures are reported as E_FAIL and retried, as
// libHttpClient on Windows and GDK reports and retries every other transport
// failure.
func noNetwork(err error) bool {
	return errors.Is(err, syscall.ENETDOWN)
}
