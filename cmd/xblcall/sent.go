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

// sent is what a call has sent that its output must not tell: the
// credentials of each of its attempts as the transport sent them (its
// token, renewed after a 401, which the request the call made never
// carries; a signature) and of each URL it went to (a redirect's Location,
// which may echo them). A service may echo any of them in a later answer,
// and a redirected request carries none of them. A load run has a sent of
// its own, which each of its calls' adds to: a token renewed in one call
// may be echoed in another's answer.
//
// A sent keeps each credential once, in the form Scrub compares
// (xblauth.Secrets.Lowered). It keeps every token (an Authorization's: a
// run has few, its renewals), and a call's keeps every credential of its
// own headers; the others (a URL's, and in a run's a signature, which
// each attempt has its own of) while it holds fewer than maxSent of them
// and maxSentBytes bytes in all. Past that bound a credential first sent
// then is not kept, and its echo is not taken out; the bound keeps a run
// whose every call is redirected to a new query's credentials from growing
// with it, and each scrub linear in it. Safe for concurrent use.
type sent struct {
	mu       sync.Mutex
	ss       xblauth.Secrets
	kept     map[string]bool // ss's
	n, bytes int             // of ss, what the bound counts
	run      *sent           // the load run's, when the call is one of a run's
}

// maxSent and maxSentBytes bound the credentials a sent keeps besides the
// ones it always keeps.
const (
	maxSent      = 4096
	maxSentBytes = 4 << 20
)

type sentKey struct{}

// withSent returns ctx with a new sent for the call (or the load run) made
// with it, which adds to the sent ctx has, if any (the run's): the
// transport's attempts and net/http's redirected requests keep it.
func withSent(ctx context.Context) context.Context {
	run, _ := ctx.Value(sentKey{}).(*sent)
	return context.WithValue(ctx, sentKey{}, &sent{run: run})
}

// callSecrets adds the credentials req carries (its header's and its
// URL's) to its call's sent, and its run's, when its context has one, and
// returns every credential they hold. Each output of a call is scrubbed of
// them: the -v trace, the answer, the error, a load run's first error.
func callSecrets(req *http.Request) xblauth.Secrets {
	inHeader := xblauth.Secrets{}.HeaderSecrets(req.Header).Lowered()
	inURL := xblauth.Secrets{}.URLSecrets(req.URL).Lowered()
	s, ok := req.Context().Value(sentKey{}).(*sent)
	if !ok {
		return append(inHeader, inURL...)
	}
	s.add(inHeader, inURL)
	if s.run != nil {
		tokens := xblauth.Secrets{}.HeaderSecrets(http.Header{"Authorization": req.Header.Values("Authorization")}).Lowered()
		s.run.add(tokens, append(inHeader, inURL...))
	}
	return s.secrets()
}

// secrets returns every credential s and its run's hold.
func (s *sent) secrets() xblauth.Secrets {
	s.mu.Lock()
	ss := slices.Clip(s.ss) // an append copies: s.ss stays the mutex's
	s.mu.Unlock()
	if s.run != nil {
		ss = append(ss, s.run.secrets()...)
	}
	return ss
}

// add adds to s every one of always, and those of bounded that the bound
// leaves room for.
func (s *sent) add(always, bounded xblauth.Secrets) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.kept == nil {
		s.kept = map[string]bool{}
	}
	for _, x := range always {
		if !s.kept[x] {
			s.kept[x] = true
			s.ss = append(s.ss, x)
		}
	}
	for _, x := range bounded {
		if !s.kept[x] && s.n < maxSent && s.bytes+len(x) <= maxSentBytes {
			s.kept[x] = true
			s.ss = append(s.ss, x)
			s.n, s.bytes = s.n+1, s.bytes+len(x)
		}
	}
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
	// quoting it) may echo the credentials: scrubbed of them, as -i's,
	// taken again once it answered (a load run's other calls may have sent
	// more meanwhile).
	ss := callSecrets(req)
	if t.w != nil {
		t.request(req, ss)
	}
	resp, err := t.base.RoundTrip(req)
	if t.w == nil && err == nil {
		return resp, nil
	}
	if s, ok := req.Context().Value(sentKey{}).(*sent); ok {
		ss = s.secrets()
	}
	if err != nil {
		err = ss.ScrubError(err)
		if t.w != nil {
			fmt.Fprintf(t.w, "< error: %s\n", safetext.Clip(oneLine(err), 500))
		}
		return nil, err
	}
	fmt.Fprintf(t.w, "< %s", safetext.Clip(shownStatus(resp.Status, ss), 100))
	if ra := resp.Header.Get("Retry-After"); ra != "" {
		fmt.Fprintf(t.w, " (Retry-After: %s)", safetext.Clip(ss.Scrub(ra), 64))
	}
	fmt.Fprintln(t.w)
	return resp, nil
}

// request prints req's line and headers, sensitive ones redacted, the
// others scrubbed of ss.
func (t *tracer) request(req *http.Request, ss xblauth.Secrets) {
	fmt.Fprintf(t.w, "> %s %s\n", safetext.Clip(req.Method, 16), scrubbedURL(req.URL.String(), ss))
	for _, k := range slices.Sorted(maps.Keys(req.Header)) {
		v := strings.Join(req.Header[k], ", ")
		switch {
		case k == "Authorization":
			v = xblauth.Redact(v)
		case xblauth.Sensitive(k):
			v = xblauth.Redacted
		case k == "Referer": // a redirect's: the URL that echoed them, shown as a URL is
			v = scrubbedURL(v, ss)
		default:
			v = ss.Scrub(v)
		}
		fmt.Fprintf(t.w, "> %s: %s\n", safetext.Clip(k, 100), safetext.Clip(v, 1000))
	}
}
