package xblauth

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"runtime"
	"strings"
	"testing"
)

// TestScrubbedErrorHidesItsCauses: no error a scrubbed error leads to, by
// Unwrap, errors.As or a Go-syntax print, tells the secret, while
// errors.Is still finds what is under it and a timeout is still one.
func TestScrubbedErrorHidesItsCauses(t *testing.T) {
	const secret = "eyJtoken-0123456789"
	ss := Secrets{}.Add(secret)
	inner := &url.Error{Op: "Get", URL: "https://user.auth.xboxlive.com/?access_token=" + secret, Err: fmt.Errorf("echo %s: %w", secret, context.DeadlineExceeded)}
	cases := map[string]error{
		"wrapped url.Error":                fmt.Errorf("transport: %w", inner),
		"url.Error at the top":             inner,
		"a cause with no secret":           fmt.Errorf("failed for %s: %w", secret, context.DeadlineExceeded),
		"the secret under a clean wrapper": fmt.Errorf("call failed: %w", &hidden{text: "quiet", err: fmt.Errorf("%s: %w", secret, context.DeadlineExceeded)}),
		"joined":                           errors.Join(errors.New("first"), fmt.Errorf("second %s: %w", secret, context.DeadlineExceeded)),
	}
	for name, err := range cases {
		t.Run(name, func(t *testing.T) {
			got := ss.ScrubError(err)
			for _, text := range atkWalk(got, 0) {
				if strings.Contains(text, secret) {
					t.Errorf("the chain tells the secret: %.200q", text)
				}
			}
			var ue *url.Error
			if errors.As(got, &ue) && (strings.Contains(ue.Error(), secret) || strings.Contains(ue.URL, secret)) {
				t.Errorf("errors.As gives a *url.Error with the secret: %.200q", ue.Error())
			}
			var ne net.Error
			if errors.As(got, &ne) && strings.Contains(ne.Error(), secret) {
				t.Errorf("errors.As gives a net.Error with the secret: %.200q", ne.Error())
			}
			if !errors.Is(got, context.DeadlineExceeded) {
				t.Errorf("errors.Is no longer finds context.DeadlineExceeded under %q", got)
			}
		})
	}
	// A *url.Error whose text held the secret is still one, scrubbed, and
	// still a timeout.
	var ue *url.Error
	got := ss.ScrubError(fmt.Errorf("transport: %w", inner))
	if !errors.As(got, &ue) || ue.Op != "Get" || !strings.Contains(ue.URL, "user.auth.xboxlive.com") || !ue.Timeout() {
		t.Errorf("errors.As(*url.Error) = %v, %+v: want the scrubbed *url.Error, a timeout", errors.As(got, &ue), ue)
	}
	// An error with no secret anywhere is returned as it is.
	clean := fmt.Errorf("x: %w", &url.Error{Op: "Get", URL: "https://a/", Err: context.Canceled})
	if ss.ScrubError(clean) != clean {
		t.Error("an error holding no secret was wrapped")
	}
}

// hidden is an error whose text does not show its cause's.
type hidden struct {
	text string
	err  error
}

func (h *hidden) Error() string { return h.text }
func (h *hidden) Unwrap() error { return h.err }

// tellsAll is an error type copyOf does not know.
type tellsAll struct{ detail string }

func (e *tellsAll) Error() string { return "failed: " + e.detail }

// TestScrubbedErrorAsCopies: errors.As gives a known type that told a
// secret as a scrubbed copy that keeps what callers decide on, and an
// unknown type that told one not at all.
func TestScrubbedErrorAsCopies(t *testing.T) {
	const secret = "sig-0123456789abcdef"
	ss := Secrets{}.Add(secret)
	dns := ss.ScrubError(fmt.Errorf("dial: %w", &net.DNSError{Err: "no such host", Name: "h" + secret, IsNotFound: true}))
	var d *net.DNSError
	if !errors.As(dns, &d) || !d.IsNotFound || strings.Contains(d.Error(), secret) {
		t.Errorf("errors.As(*net.DNSError) = %v, %+v: want a not-found copy without the secret", d != nil, d)
	}
	unknown := ss.ScrubError(fmt.Errorf("x: %w", &tellsAll{secret}))
	var u *tellsAll
	if errors.As(unknown, &u) || u != nil {
		t.Errorf("errors.As gave an unknown type that tells the secret: %+v", u)
	}
	clean := &tellsAll{"nothing"}
	var c *tellsAll
	if !errors.As(ss.ScrubError(fmt.Errorf("x %s: %w", secret, clean)), &c) || c != clean {
		t.Errorf("errors.As did not give a cause that tells no secret: %+v", c)
	}
}

// TestScrubErrorBoundedOnSharedJoins: a tree of joins that share their
// branches (2^16 paths; its text is 2^16 leaves long) is judged after
// reading a bounded number of errors, as telling.
func TestScrubErrorBoundedOnSharedJoins(t *testing.T) {
	ss := Secrets{}.Add("sig-0123456789abcdef")
	err := errors.New("leaf")
	for range 16 {
		err = errors.Join(err, err)
	}
	got := ss.ScrubError(err)
	if got == err {
		t.Error("a tree too large to read was taken as telling no secret")
	}
}

// bigErr is an error that keeps a large buffer (the body it failed on).
type bigErr struct{ body []byte }

func (e *bigErr) Error() string { return "short read" }

// TestScrubErrorBoundedInBytes: the fields ScrubError reads are bounded in
// bytes, not only in values: an error keeping 64 MiB (no secret in it) is
// judged without copying it (before: 384 MiB allocated and 0.46 s, per
// error), and is taken as telling, as a tree too large to read is.
func TestScrubErrorBoundedInBytes(t *testing.T) {
	ss := Secrets{}.Add("sig-0123456789abcdef")
	err := fmt.Errorf("call: %w", &bigErr{body: make([]byte, 64<<20)})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got := ss.ScrubError(err)
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 4<<20 {
		t.Errorf("ScrubError of an error keeping 64 MiB allocated %d MiB", n>>20)
	}
	if got == err {
		t.Error("an error too large to read was taken as telling no secret")
	}
}
