package xblauth

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// atk2Bounded runs f, failing when it takes longer than d or allocates
// more than maxBytes.
func atk2Bounded(t *testing.T, what string, d time.Duration, maxBytes uint64, f func()) {
	t.Helper()
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	done := make(chan struct{})
	start := time.Now()
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d + 5*time.Second):
		t.Fatalf("hole: %s hangs (more than %v)", what, d+5*time.Second)
	}
	el := time.Since(start)
	runtime.ReadMemStats(&m1)
	if el > d {
		t.Errorf("hole: %s took %v (bound %v)", what, el, d)
	}
	if a := m1.TotalAlloc - m0.TotalAlloc; a > maxBytes {
		t.Errorf("hole: %s allocated %d bytes (bound %d)", what, a, maxBytes)
	}
}

type atk2AnyErr struct{ V any }

func (e *atk2AnyErr) Error() string { return "denied" }

type atk2Cyc struct {
	M map[string]any
	S []any
	I any
	P *atk2Cyc
}

func TestScrub2HostileShapes(t *testing.T) {
	ss := Secrets{}.Add(atk2Tok)

	// Cycles through maps, slices, interfaces and pointers.
	c := &atk2Cyc{M: map[string]any{}, S: make([]any, 1)}
	c.M["self"] = c.M
	c.M["c"] = c
	c.S[0] = c.S
	c.I = c
	c.P = c
	atk2Bounded(t, "a cyclic value", time.Second, 1<<20, func() { ss.ScrubError(&atk2AnyErr{V: c}) })

	// A huge map.
	big := make(map[int]string, 1<<20)
	for i := range 1 << 20 {
		big[i] = "x"
	}
	atk2Bounded(t, "a 1M-entry map", time.Second, 4<<20, func() { ss.ScrubError(&atk2AnyErr{V: big}) })

	// Many small strings.
	many := make([]string, 1<<20)
	for i := range many {
		many[i] = "abcdefgh"
	}
	atk2Bounded(t, "1M small strings", time.Second, 16<<20, func() { ss.ScrubError(&atk2AnyErr{V: many}) })

	// Big arrays of bytes, runes, numbers.
	ba, ra, is := &atk2AnyErr{V: new([64 << 20]byte)}, &atk2AnyErr{V: new([16 << 20]rune)}, &atk2AnyErr{V: make([]int, 16<<20)}
	atk2Bounded(t, "a 64 MiB byte array", 2*time.Second, 8<<20, func() { ss.ScrubError(ba) })
	atk2Bounded(t, "a 16M-rune array", 2*time.Second, 8<<20, func() { ss.ScrubError(ra) })
	atk2Bounded(t, "a 16M-int slice", time.Second, 1<<20, func() { ss.ScrubError(is) })

	// Deep nesting: a 1,000,000-deep chain of interfaces in interfaces.
	var deep any = "end"
	for range 1_000_000 {
		deep = &atk2AnyErr{V: deep}
	}
	atk2Bounded(t, "a 1,000,000-deep nesting", time.Second, 8<<20, func() { ss.ScrubError(&atk2AnyErr{V: deep}) })

	// Unexported fields, channels, funcs, unsafe pointers: no panic.
	x := 5
	type hid struct {
		ch chan int
		f  func()
		up unsafe.Pointer
		s  string
	}
	atk2Bounded(t, "unexported odd fields", time.Second, 1<<20, func() {
		ss.ScrubError(&atk2AnyErr{V: hid{make(chan int), func() {}, unsafe.Pointer(&x), "clean"}})
	})
}

// A secret in a hidden field is found whatever the kind around it.
func TestScrub2HiddenSecretsFound(t *testing.T) {
	ss := Secrets{}.Add(atk2Tok)
	type priv struct{ s string }
	for name, v := range map[string]any{
		"unexported":  priv{atk2Tok},
		"map key":     map[string]int{atk2Tok: 1},
		"runes":       []rune(atk2Tok),
		"rune array":  [len(atk2Tok)]rune([]rune(atk2Tok)),
		"bytes":       []byte(atk2Tok),
		"nested any":  []any{map[any]any{1: []any{priv{strings.ToUpper(atk2Tok)}}}},
		"error field": fmt.Errorf("x: %w", errors.New(atk2Tok)),
	} {
		if !ss.tells(&atk2AnyErr{V: v}) {
			t.Errorf("hole: a token in a %s is not seen", name)
		}
	}
}

// causeSecrets over many secrets and long texts stays near linear.
func TestScrub2CauseSecretsScale(t *testing.T) {
	var ss Secrets
	for i := range 64 {
		ss = ss.Add(fmt.Sprintf("%s%04d", strings.Repeat("k", 4000), i))
	}
	cause := errors.New(strings.Repeat("k", 1<<20))
	err := fmt.Errorf("%s%w", ss[0], cause)
	atk2Bounded(t, "a 1 MiB split over 64 long secrets", 5*time.Second, 1<<30, func() {
		s := ss.ScrubError(err)
		walkAll(s, func(e error) { _ = e.Error() })
	})
}

// Values an As method gives: a hostile As giving a non-error value that
// holds the secret, or one whose fields do.
type atk2AsErr struct{}

func (atk2AsErr) Error() string { return "denied" }
func (atk2AsErr) As(target any) bool {
	switch p := target.(type) {
	case *fmt.Stringer:
		*p = atk2Str{}
		return true
	case *interface{ Get() string }:
		tok := strings.Clone(atk2Tok)
		*p = atk2Getter{func() string { return tok }}
		return true
	}
	return false
}

type atk2Getter struct{ f func() string }

func (g atk2Getter) Get() string { return g.f() }

type atk2Str struct{}

func (atk2Str) String() string { return "tok " + atk2Tok }

func TestScrub2AsGivesValues(t *testing.T) {
	ss := Secrets{}.Add(atk2Tok)
	got := ss.ScrubError(fmt.Errorf("%s: %w", atk2Tok, atk2AsErr{}))
	var s fmt.Stringer
	if errors.As(got, &s) && strings.Contains(s.String(), atk2Tok) {
		t.Errorf("hole: a Stringer an As method gives tells the token")
	}
	var g interface{ Get() string }
	if errors.As(got, &g) && g.Get() == atk2Tok {
		t.Errorf("hole: a value an As method gives, holding the token in a closure, tells it")
	}
}
