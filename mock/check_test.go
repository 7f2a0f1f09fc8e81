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
