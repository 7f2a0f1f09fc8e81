package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/internal/xblauth"
)

// sent is what one call (call's one, or one of a load run's) has sent that
// its output must not tell: the credentials of each of its attempts as the
// transport sent them (its token, renewed after a 401, which the request
// the call made never carries; a signature) and of each URL it went to (a
// redirect's Location, which may echo them). A service may echo any of
// them in a later answer, and a redirected request carries none of them.
// Safe for concurrent use.
type sent struct {
	mu sync.Mutex
	ss xblauth.Secrets
}

type sentKey struct{}

// withSent returns ctx with a new sent for the call made with it: the
// transport's attempts and net/http's redirected requests keep it.
func withSent(ctx context.Context) context.Context {
	return context.WithValue(ctx, sentKey{}, new(sent))
}

// callSecrets adds the credentials req carries (its header's and its
// URL's) to its call's sent, when its context has one, and returns every
// credential the call has sent so far. Each output of a call is scrubbed
// of them: the -v trace, the answer, the error, a load run's first error.
func callSecrets(req *http.Request) xblauth.Secrets {
	own := xblauth.Secrets{}.HeaderSecrets(req.Header).URLSecrets(req.URL)
	s, ok := req.Context().Value(sentKey{}).(*sent)
	if !ok {
		return own
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, x := range own {
		if !slices.Contains(s.ss, x) {
			s.ss = append(s.ss, x)
		}
	}
	return slices.Clip(s.ss) // an append by the caller copies: s.ss stays the mutex's
}

// tracer is every call's transport's Base: it adds each attempt's
// credentials to its call's sent (callSecrets) and, when w is set (-v),
// prints the attempt with its headers, sensitive ones redacted. An
// attempt's error is returned scrubbed of the call's credentials, so that
// neither the transport's log nor the call's error tells them.
type tracer struct {
	base http.RoundTripper
	w    io.Writer // nil: nothing printed
}

func (t *tracer) RoundTrip(req *http.Request) (*http.Response, error) {
	// What the service sent (its status line, a header's name or value, a
	// redirect's Location that became this request's URL, net/http's error
	// quoting it) may echo the credentials: scrubbed of them, as -i's.
	ss := callSecrets(req)
	if t.w == nil {
		resp, err := t.base.RoundTrip(req)
		return resp, ss.ScrubError(err)
	}
	fmt.Fprintf(t.w, "> %s %s\n", safetext.Clip(req.Method, 16), ss.Scrub(shownURL(req.URL.String())))
	for _, k := range slices.Sorted(maps.Keys(req.Header)) {
		v := strings.Join(req.Header[k], ", ")
		switch {
		case k == "Authorization":
			v = xblauth.Redact(v)
		case xblauth.Sensitive(k):
			v = xblauth.Redacted
		default: // a redirect's Referer is the URL that echoed them
			v = ss.Scrub(v)
		}
		fmt.Fprintf(t.w, "> %s: %s\n", safetext.Clip(k, 100), safetext.Clip(v, 1000))
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		err = ss.ScrubError(err)
		fmt.Fprintf(t.w, "< error: %s\n", safetext.Clip(oneLine(err), 500))
		return nil, err
	}
	fmt.Fprintf(t.w, "< %s", safetext.Clip(shownStatus(resp.Status, ss), 100))
	if ra := resp.Header.Get("Retry-After"); ra != "" {
		fmt.Fprintf(t.w, " (Retry-After: %s)", safetext.Clip(ss.Scrub(ra), 64))
	}
	fmt.Fprintln(t.w)
	return resp, nil
}
