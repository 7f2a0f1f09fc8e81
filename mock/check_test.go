package mock

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestEveryCheckFailsClosedOnDroppedCalls: the record of calls keeps the
// latest 10,000; when it dropped calls made in the window a check looks
// at, No429 ("fail when any call was answered 429") and an expected count
// (here: no call to userpresence) fail, saying the record is incomplete,
// as Certify does; since a time after the dropped calls, they pass.
// Before, they were judged on the calls left: a 429 the record dropped,
// or calls the expectation forbids that it dropped, passed the check
// (xblcall check --no-429, --expect ...=0).
func TestEveryCheckFailsClosedOnDroppedCalls(t *testing.T) {
	h := NewHandler()
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	h.journal.keep(Call{Time: t0, Method: "GET", host: "profile.xboxlive.com", uri: "/users/me/profile/settings", Scope: "profile",
		Status: 429, RetryAfter: "60", userhash: "throttled"})
	h.journal.keep(Call{Time: t0.Add(time.Second), Method: "GET", host: "userpresence.xboxlive.com", uri: "/users/me", Scope: "presence",
		Status: 200, userhash: "u"})
	for i := range maxCalls {
		h.journal.keep(Call{Time: t0.Add(time.Duration(i+2) * time.Second), Method: "GET", host: "social.xboxlive.com", uri: "/users/me/people",
			Scope: "social", Status: 200, userhash: fmt.Sprint("u", i)})
	}
	tests := []struct {
		name string
		opts CheckOptions
	}{
		{"no 429", CheckOptions{No429: true}},
		{"no call to userpresence", CheckOptions{Expect: []Expectation{{CallFilter: CallFilter{Host: "userpresence.xboxlive.com"}, Count: 0}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := h.Check(tt.opts)
			if err != nil || res.OK || len(res.Failures) != 1 || !strings.Contains(res.Failures[0], "incomplete: the record keeps the latest 10000 calls") {
				t.Errorf("%v: ok %v, failures %q; want a failure: the record dropped the calls the check is about", err, res.OK, res.Failures)
			}
			tt.opts.Since = t0.Add(2 * time.Second)
			for i := range tt.opts.Expect {
				tt.opts.Expect[i].Since = tt.opts.Since
			}
			if res, err := h.Check(tt.opts); err != nil || !res.OK {
				t.Errorf("since the dropped calls: %v, failures %q; want ok", err, res.Failures)
			}
		})
	}
}

// TestCheckAcrossForgetCalls: emptying the record of calls drops them all;
// a check of a window that reaches back to calls it dropped fails as
// incomplete, naming the emptying, while a check without Since (the calls
// since the emptying) or of a window after the dropped calls passes.
// Before, a window reaching back past a reset was judged on the calls
// left: its 429 and all but its last call gone, No429 and Expect passed.
func TestCheckAcrossForgetCalls(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	now := t0.Add(2 * time.Second)
	h := Must(New(Config{Now: func() time.Time { return now }}))
	h.journal.keep(Call{Time: t0, Method: "GET", host: "profile.xboxlive.com", uri: "/users/me/profile/settings", Scope: "profile",
		Status: 429, RetryAfter: "60", userhash: "u"})
	h.ForgetCalls()
	h.journal.keep(Call{Time: t0.Add(3 * time.Second), Method: "GET", host: "profile.xboxlive.com", uri: "/users/me/profile/settings",
		Scope: "profile", Status: 200, userhash: "u"})
	one := []Expectation{{CallFilter: CallFilter{Host: "profile.xboxlive.com"}, Count: 1}}
	tests := []struct {
		name   string
		since  time.Time
		failed bool
	}{
		{"since before the dropped call", t0, true},
		{"since the emptying", time.Time{}, false},
		{"since after the dropped call", t0.Add(time.Second), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := h.Check(CheckOptions{No429: true, Expect: one, Since: tt.since})
			if err != nil {
				t.Fatal(err)
			}
			if !tt.failed {
				if !res.OK {
					t.Errorf("failures %q, want ok", res.Failures)
				}
				return
			}
			want := "incomplete: the record of calls was emptied at " + now.Format(time.RFC3339Nano)
			if len(res.Failures) != 2 || !strings.Contains(res.Failures[0], want) || !strings.Contains(res.Failures[1], want) {
				t.Errorf("failures %q, want No429's and Expect's, each %q", res.Failures, want)
			}
		})
	}
}

// TestClippedPathFailsClosed: the record keeps a call's URL to 1 KiB; a
// path prefix longer than the part kept matches the call when it is its
// whole path (in any ASCII case, percent-encoded or not), and otherwise,
// when the part kept begins it, cannot tell: Calls leaves the call out and
// an expected count fails as incomplete, whatever the count. Before, the
// call matched no longer prefix: Expect(its path, 0) passed on a call to
// it.
func TestClippedPathFailsClosed(t *testing.T) {
	h := Must(New(Config{Fallback: true}))
	path := "/users/me/" + strings.Repeat("a", 1100) + "/target"
	do(t, h, "GET", "https://userpresence.xboxlive.com"+path, Token(xuid1, title1), "")
	tests := []struct {
		name   string
		prefix string
		n      int  // calls matched, when it can tell
		unsure bool // it cannot
	}{
		{"the whole path", path, 1, false},
		{"the whole path, another case", strings.ToUpper(path), 1, false},
		{"the whole path, percent-encoded", strings.Replace(path, "/target", "/t%61rget", 1), 1, false},
		{"within the part kept", path[:500], 1, false},
		{"away within the part kept", path[:500] + "b", 0, false},
		{"past the part kept", path[:1100], 0, true},
		{"past the whole path", path + "/more", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := CallFilter{PathPrefix: tt.prefix}
			if got := len(h.Calls(f)); got != tt.n {
				t.Errorf("Calls: %d, want %d", got, tt.n)
			}
			for _, count := range []int{0, 1} {
				res, err := h.Check(CheckOptions{Expect: []Expectation{{CallFilter: f, Count: count}}})
				if err != nil {
					t.Fatal(err)
				}
				clipped := len(res.Failures) == 1 && strings.Contains(res.Failures[0], "incomplete: a call's URL was clipped in the record (to 1024 bytes) before the filter's path ended, and it cannot be told apart (1 in all)")
				if tt.unsure && !clipped || !tt.unsure && res.OK != (count == tt.n) {
					t.Errorf("Expect(%d): ok %v, failures %q", count, res.OK, res.Failures)
				}
			}
		})
	}
}
