package transport

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/url"

	"github.com/xblgo/fgrl/hresult"
	"github.com/xblgo/fgrl/internal/safetext"
)

// checkURL refuses, before anything is sent, a request no retry could
// help: no URL, a scheme other than http or https, or no host.
func checkURL(u *url.URL) error {
	switch {
	case u == nil:
		return &usageError{"request has no URL"}
	case u.Scheme != "https" && u.Scheme != "http":
		return &usageError{"unsupported URL scheme " + safetext.Quote(u.Scheme, 32) + " (want https)"}
	case u.Host == "":
		return &usageError{"request URL has no host"}
	}
	return nil
}

// permanent reports whether a transport failure is one that no retry can
// change, so the call fails at once: the network is down (E_HC_NO_NETWORK,
// which libHttpClient never retries), the name does not exist, the server's
// certificate does not verify, or the transport refused the request itself.
// Every other failure (resets, refused connections, timeouts, unreachable
// hosts and networks, DNS timeouts and server failures) is retried, as
// libHttpClient does on Windows and GDK, where it reports all of them as
// E_FAIL.
func permanent(err error) bool {
	var (
		dns      *net.DNSError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
		verify   *tls.CertificateVerificationError
		usage    *usageError
	)
	switch {
	case hresult.Of(err) == hresult.E_HC_NO_NETWORK, errors.Is(err, ErrInsecure), errors.As(err, &usage):
		return true
	case errors.As(err, &dns):
		return dns.IsNotFound
	}
	return errors.As(err, &unknown) || errors.As(err, &hostname) || errors.As(err, &invalid) || errors.As(err, &verify)
}
