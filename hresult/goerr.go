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

// noNetwork reports whether err says the network itself is unreachable, as
// opposed to a reachable host that failed.
func noNetwork(err error) bool {
	if errors.Is(err, syscall.ENETUNREACH) || errors.Is(err, syscall.EHOSTUNREACH) ||
		errors.Is(err, syscall.ENETDOWN) {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns) && !dns.IsNotFound
}
