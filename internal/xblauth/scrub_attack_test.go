package xblauth

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"
)

// atkSecret is a token as XSTS issues them: base64 with '+', '/' and '='.
const atkSecret = "eyJhbGciOi+JIUzI1/NiJ9.abcDEF+ghi/JKL=="

// atkWalk returns every text a reporter can get from err: Error, the fmt
// verbs, and the same of every error under it by both Unwrap forms.
func atkWalk(err error, depth int) []string {
	if err == nil || depth > 40 {
		return nil
	}
	out := []string{err.Error()}
	for _, v := range []string{"%v", "%+v", "%s", "%q", "%#v", "%x"} {
		out = append(out, fmt.Sprintf(v, err))
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		out = append(out, atkWalk(u.Unwrap(), depth+1)...)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			out = append(out, atkWalk(e, depth+1)...)
		}
	}
	return out
}

// atkTells reports the first text holding part, hex-decoding %x output.
func atkTells(texts []string, part string) (string, bool) {
	for _, s := range texts {
		if strings.Contains(strings.ToLower(s), strings.ToLower(part)) {
			return s, true
		}
		if strings.Contains(s, fmt.Sprintf("%x", part)) {
			return s, true
		}
	}
	return "", false
}

// TestScrubOpErrorCopyAddr: the *net.OpError errors.As gives is a copy
// "with its texts scrubbed", yet its Addr (and Source) are kept as they
// are, so the copy's own Error() tells the secret.
func TestScrubOpErrorCopyAddr(t *testing.T) {
	ss := Secrets{}.Add(atkSecret)
	op := &net.OpError{Op: "dial", Net: "unix", Addr: &net.UnixAddr{Name: "/run/proxy-" + atkSecret, Net: "unix"}, Err: errors.New("connection refused")}
	got := ss.ScrubError(fmt.Errorf("transport: %w", op))
	var o *net.OpError
	if !errors.As(got, &o) {
		t.Fatalf("errors.As *net.OpError: not found")
	}
	if s, bad := atkTells(atkWalk(o, 0), atkSecret); bad {
		t.Errorf("errors.As(*net.OpError) copy tells the secret: %q", s)
	}
}

// atkLeaky is an error whose text tells the secret and whose As method
// hands out a value (not an error) that tells it too.
type atkLeaky struct{ tok string }

func (e *atkLeaky) Error() string { return "bad token " + e.tok }

type atkStringer string

func (s atkStringer) String() string { return string(s) }

func (e *atkLeaky) As(target any) bool {
	if p, ok := target.(*fmt.Stringer); ok {
		*p = atkStringer("token=" + e.tok)
		return true
	}
	return false
}

// TestScrubAsInterfaceNonError: errors.As into an interface target is
// answered by a cause's As method with a value that is not an error; As
// only checks values that are errors, so the value is given as it is.
func TestScrubAsInterfaceNonError(t *testing.T) {
	ss := Secrets{}.Add(atkSecret)
	got := ss.ScrubError(fmt.Errorf("call: %w", &atkLeaky{tok: atkSecret}))
	var s fmt.Stringer
	if errors.As(got, &s) && strings.Contains(s.String(), atkSecret) {
		t.Errorf("errors.As(*fmt.Stringer) gives a value telling the secret: %q", s.String())
	}
}

// TestScrubSplitAcrossLevels: a wrapper's text ends with the start of
// the secret and its cause's text holds the rest. The wrapper is
// scrubbed, but the cause, whose text holds only a part, is given as it
// is: walking Unwrap tells all but the first 4 bytes of the secret.
func TestScrubSplitAcrossLevels(t *testing.T) {
	ss := Secrets{}.Add(atkSecret)
	cause := errors.New(atkSecret[4:] + " was refused")
	err := fmt.Errorf("GET /users?t=%s%w", atkSecret[:4], cause)
	if !strings.Contains(err.Error(), atkSecret) {
		t.Fatal("setup: wrapper text does not hold the secret")
	}
	got := ss.ScrubError(err)
	if s, bad := atkTells(atkWalk(got, 0), atkSecret[4:]); bad {
		t.Errorf("a cause tells the secret's last %d bytes: %q", len(atkSecret)-4, s)
	}
}

// atkPanicky's Error panics (a typed nil, a hostile error).
type atkPanicky struct{ next error }

func (e *atkPanicky) Error() string { panic("Error() panics") }
func (e *atkPanicky) Unwrap() error { return e.next }

type atkNilErr struct{ s string }

func (e *atkNilErr) Error() string { return e.s }

// TestScrubPanickingError: ScrubError must not panic on an error
// whose Error panics, at the top or under a wrapper that tells a secret
// (reached by Unwrap), nor on a typed-nil cause.
func TestScrubPanickingError(t *testing.T) {
	ss := Secrets{}.Add(atkSecret)
	cases := map[string]error{
		"top":                 &atkPanicky{},
		"under secret":        fmt.Errorf("tok %s: %w", atkSecret, &atkPanicky{}),
		"typed nil":           fmt.Errorf("tok %s: %w", atkSecret, error((*atkNilErr)(nil))),
		"panicky over secret": &atkPanicky{next: errors.New(atkSecret)},
	}
	for name, err := range cases {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: ScrubError or a walk of its answer panics: %v", name, r)
				}
			}()
			got := ss.ScrubError(err)
			for e := got; e != nil; e = errors.Unwrap(e) {
				_ = e.Error()
			}
			_ = errors.Is(got, context.Canceled)
		}()
	}
}

// atkCycle is an error that is its own cause.
type atkCycle struct{ s string }

func (e *atkCycle) Error() string { return e.s }
func (e *atkCycle) Unwrap() error { return e }

// atkJoinCycle is a join that holds itself twice.
type atkJoinCycle struct{ s string }

func (e *atkJoinCycle) Error() string   { return e.s }
func (e *atkJoinCycle) Unwrap() []error { return []error{e, e} }

func atkWithin(t *testing.T, name string, d time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Errorf("%s: did not return within %v", name, d)
	}
}

// TestScrubCycleTimeout: ScrubError on an error that is its own cause
// returns, and so does Timeout on its answer, which a *url.Error around it
// (http.Client's) calls: the raw error has no Timeout method, so the raw
// *url.Error answers at once.
func TestScrubCycleTimeout(t *testing.T) {
	ss := Secrets{}.Add(atkSecret)
	for name, err := range map[string]error{
		"unwrap self": &atkCycle{s: "tok " + atkSecret},
		"join self":   &atkJoinCycle{s: "tok " + atkSecret},
	} {
		var got error
		atkWithin(t, name+": ScrubError", 5*time.Second, func() { got = ss.ScrubError(err) })
		if got == nil {
			continue
		}
		atkWithin(t, name+": (&url.Error{Err: scrubbed}).Timeout()", 5*time.Second, func() {
			_ = (&url.Error{Op: "Get", URL: "https://x", Err: got}).Timeout()
		})
		atkWithin(t, name+": Temporary()", 5*time.Second, func() {
			if tmp, ok := got.(interface{ Temporary() bool }); ok {
				_ = tmp.Temporary()
			}
		})
	}
}

// TestScrubEscapedForms: a service's JSON echo of the token written by
// encoders other than Go's: "\/" for '/' (PHP, many JS/Java encoders) and
// "\u002B" for '+' (System.Text.Json's default). ScrubError must not let
// them through.
func TestScrubEscapedForms(t *testing.T) {
	ss := Secrets{}.Add(atkSecret)
	forms := map[string]string{
		`\/`:     strings.ReplaceAll(atkSecret, "/", `\/`),
		`\u002B`: strings.ReplaceAll(atkSecret, "+", `\u002B`),
	}
	for name, f := range forms {
		err := errors.New(`unexpected answer {"message":"bad token ` + f + `"}`)
		got := ss.ScrubError(err).Error()
		if strings.Contains(got, f) {
			t.Errorf("%s-escaped secret survives ScrubError: %q", name, got)
		}
	}
}

// atkFieldErr hides the secret from Error but holds it in a field that
// %#v and %+v print (a cause whose text is clean, its fields not).
type atkFieldErr struct {
	Msg   string
	Query string
}

func (e *atkFieldErr) Error() string { return e.Msg }

// atkFormatter prints more under %+v than Error says.
type atkFormatter struct{ msg, detail string }

func (e *atkFormatter) Error() string { return e.msg }
func (e *atkFormatter) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('+') {
		fmt.Fprintf(f, "%s (%s)", e.msg, e.detail)
		return
	}
	fmt.Fprint(f, e.msg)
}

// TestScrubCleanTextSecretFields: under a wrapper that tells the
// secret, a cause whose Error is clean but whose %#v or %+v tells it is
// reached by Unwrap as it is.
func TestScrubCleanTextSecretFields(t *testing.T) {
	ss := Secrets{}.Add(atkSecret)
	for name, cause := range map[string]error{
		"fields":    &atkFieldErr{Msg: "refused", Query: "t=" + atkSecret},
		"formatter": &atkFormatter{msg: "refused", detail: "t=" + atkSecret},
	} {
		got := ss.ScrubError(fmt.Errorf("GET ?t=%s: %w", atkSecret, cause))
		if s, bad := atkTells(atkWalk(got, 0), atkSecret); bad {
			t.Errorf("%s: a cause tells the secret: %q", name, s)
		}
		if s, bad := atkTells(atkWalk(ss.ScrubError(cause), 0), atkSecret); bad {
			t.Errorf("%s alone: tells the secret: %q", name, s)
		}
	}
}

// TestScrubCostHostileTrees: huge texts, deep chains, wide joins:
// ScrubError and a walk of the first levels of its answer take bounded time.
func TestScrubCostHostileTrees(t *testing.T) {
	ss := Secrets{}.Add(atkSecret)
	for i := 0; i < 60; i++ {
		ss = ss.Add(fmt.Sprintf("%s-%02d", atkSecret, i))
	}
	big := errors.New(strings.Repeat("a", 8<<20) + atkSecret)
	deep := error(errors.New("tok " + atkSecret))
	for i := 0; i < 20000; i++ {
		deep = &atkWrap{deep}
	}
	wide := make([]error, 200000)
	for i := range wide {
		wide[i] = errors.New("x")
	}
	wide[len(wide)-1] = errors.New(atkSecret)
	overlap := errors.New(strings.Repeat(atkSecret[:20], 200000))
	fat := &atkFat{Items: make([]string, 1000000), Index: map[string]string{}}
	for i := range 100000 {
		fat.Index[fmt.Sprint(i)] = "v"
	}
	fat.Self = fat
	fatChain := error(fat)
	for range 300 {
		fatChain = &atkFatWrap{Fat: fat, next: fatChain}
	}
	for name, err := range map[string]error{"huge text": big, "deep chain": deep, "wide join": errors.Join(wide...), "near misses": overlap, "fat fields": fmt.Errorf("tok %s: %w", atkSecret, fatChain)} {
		atkWithin(t, name, 20*time.Second, func() {
			got := ss.ScrubError(err)
			e := got
			for i := 0; i < 3 && e != nil; i++ {
				_ = e.Error()
				e = errors.Unwrap(e)
			}
		})
	}
}

type atkWrap struct{ next error }

func (e *atkWrap) Error() string { return "w" }
func (e *atkWrap) Unwrap() error { return e.next }

// atkFat is an error with a clean text and large fields to read.
type atkFat struct {
	Items []string
	Index map[string]string
	Self  *atkFat
}

func (e *atkFat) Error() string { return "fat" }

type atkFatWrap struct {
	Fat  *atkFat
	next error
}

func (e *atkFatWrap) Error() string { return "fat wrap" }
func (e *atkFatWrap) Unwrap() error { return e.next }
