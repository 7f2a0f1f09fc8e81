package transport

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/xblgo/fgrl/hresult"
	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/internal/xblauth"
	"github.com/xblgo/fgrl/ratelimit"
)

// ThrottleError reports a call that FGRL stopped: refused by the service
// (429 after the retries the transport allows) or refused locally, without
// sending, by the budget or the Retry-After cache. errors.Is(err,
// hresult.HTTP_E_STATUS_429_TOO_MANY_REQUESTS) holds for it (or, for a
// call failed fast on another cached status, that status's HRESULT).
type ThrottleError struct {
	// Status is the HTTP status: 429, or the cached status a call was
	// failed fast with.
	Status int
	// Wait is how long to wait before trying again: the service's
	// Retry-After, or, when it sent none usable, the backoff XSAPI would use.
	Wait time.Duration
	// Local is true when the transport refused the call itself, without the
	// service's final word (the budget or the Retry-After cache).
	Local bool
	// Sent reports whether any attempt of the call reached the network.
	Sent bool
	// Scope is the limits-data scope of the call ("profile",
	// "presence/write"), or "" for a host with no rule.
	Scope string
	// Body is the service's 429 body when it sent one that parses.
	Body *ratelimit.Body
}

// HRESULT returns the code XSAPI would report: the status's, so
// HTTP_E_STATUS_429_TOO_MANY_REQUESTS for a 429. It makes a ThrottleError an
// hresult.Reporter, so hresult.Of finds it in any chain.
func (e *ThrottleError) HRESULT() hresult.HRESULT { return hresult.FromStatus(e.Status) }

// Is reports whether target is e's HRESULT.
func (e *ThrottleError) Is(target error) bool { return hresult.Is(e, target) }

// Error says who refused, whether a request was sent, and when to retry.
func (e *ThrottleError) Error() string {
	var b strings.Builder
	b.WriteString("transport: ")
	if e.Local {
		b.WriteString("refused locally")
	} else {
		b.WriteString("throttled by the service")
	}
	b.WriteString(" (")
	b.WriteString(e.HRESULT().String())
	if e.Scope != "" {
		b.WriteString(", ")
		b.WriteString(e.Scope)
	}
	b.WriteString("); ")
	if e.Sent {
		b.WriteString("request was sent")
	} else {
		b.WriteString("no request was sent")
	}
	b.WriteString("; retry after ")
	b.WriteString(e.Wait.String())
	if e.Body != nil && e.Body.MaxRequests > 0 {
		b.WriteString(" (")
		b.WriteString(strconv.Itoa(e.Body.CurrentRequests))
		b.WriteString(" of ")
		b.WriteString(strconv.Itoa(e.Body.MaxRequests))
		b.WriteString(" per ")
		b.WriteString(strconv.Itoa(e.Body.PeriodInSeconds))
		b.WriteString(" s)")
	}
	return b.String()
}

// ErrInsecure is returned for a request that would send an Xbox Live token
// over plain http:// to a host other than loopback.
var ErrInsecure = errors.New("transport: refusing to send an XBL token over plain http to a non-loopback host (set AllowInsecure to override)")

// readBody parses and closes a 429's body.
func readBody(resp *http.Response) *ratelimit.Body {
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, ratelimit.MaxBodySize+1))
	return parse429(b, err, resp.Request)
}

// parse429 parses a 429's body as read; nil when it could not be read or
// does not parse. sent is the request it answers, as sent (nil: unknown).
func parse429(b []byte, readErr error, sent *http.Request) *ratelimit.Body {
	if readErr != nil {
		return nil
	}
	body, err := ratelimit.ParseBody(b)
	if err != nil {
		return nil
	}
	// The service's text goes on to errors, logs and span attributes:
	// without the credentials the attempt sent (a token, the signature
	// made for it), then clipped and escaped, here, once.
	// The userhash too: events and spans never name the user.
	var ss xblauth.Secrets
	if sent != nil {
		ss = sentSecrets(sent) // a service may quote the URL it refused
		if uhs, _, err := xblauth.Parse(headerFold(sent.Header, "Authorization")); err == nil {
			ss = ss.Add(uhs)
		}
	}
	scrub := func(s string, max int) string { return safetext.Clip(hideXUIDs(textUsers(ss, s).Scrub(s)), max) }
	body.LimitType, body.DebugMessage, body.Aspect = scrub(body.LimitType, 64), scrub(body.DebugMessage, 200), scrub(body.Aspect, 64)
	return &body
}
