package mock

import (
	"errors"
	"net/http"

	"github.com/xblgo/fgrl/internal/xblauth"
)

// Divert returns a RoundTripper that sends every request for an Xbox host
// to the mock h, in-process, and every other request to base: the hosts h
// serves (the limits' services, the Store's, the sign-in services) and any
// other xboxlive.com host, which the mock answers 404 uncounted. Plug it
// under a transport or an http.Client of the code under test, and no Xbox
// request, and no token the mock minted, leaves the machine however the
// code builds its URLs. A nil base refuses every other request.
func Divert(h *Handler, base http.RoundTripper) http.RoundTripper {
	return &divert{h: h, base: base}
}

type divert struct {
	h    *Handler
	base http.RoundTripper
}

// ErrNotDiverted is what a Divert with no base answers for a host that is
// not an Xbox one.
var ErrNotDiverted = errors.New("mock: Divert has no base for a host that is not an Xbox one")

func (d *divert) RoundTrip(req *http.Request) (*http.Response, error) {
	if d.xbox(req.URL.Host) || req.Host != "" && d.xbox(req.Host) {
		return d.h.RoundTrip(req)
	}
	if d.base == nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, ErrNotDiverted
	}
	return d.base.RoundTrip(req)
}

// xbox reports whether host is one the mock stands for.
func (d *divert) xbox(host string) bool { return d.h.Serves(host) || xblauth.ServiceHost(host) }
