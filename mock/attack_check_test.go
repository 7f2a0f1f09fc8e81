package mock

import (
	"fmt"
	"testing"
	"time"
)

// TestAttackCheckPassesOnDroppedCalls: the record of calls keeps the
// latest 10,000; Certify fails closed when it dropped calls of the window
// checked, but No429 ("fail when any call was answered 429") and an
// expected count (here: no call to userpresence) are judged on the calls
// left: a 429 the record dropped, or calls the expectation forbids that
// it dropped, pass the check (xblcall check --no-429, --expect ...=0).
func TestAttackCheckPassesOnDroppedCalls(t *testing.T) {
	h := NewHandler()
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	h.calls.add(Call{Time: t0, Method: "GET", host: "profile.xboxlive.com", uri: "/users/me/profile/settings", Scope: "profile",
		Status: 429, RetryAfter: "60", userhash: "throttled"})
	h.calls.add(Call{Time: t0.Add(time.Second), Method: "GET", host: "userpresence.xboxlive.com", uri: "/users/me", Scope: "presence",
		Status: 200, userhash: "u"})
	for i := range maxCalls {
		h.calls.add(Call{Time: t0.Add(time.Duration(i+2) * time.Second), Method: "GET", host: "social.xboxlive.com", uri: "/users/me/people",
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
			if err != nil || res.OK {
				t.Errorf("%v: ok %v, failures %q; want a failure: the record dropped the calls the check is about", err, res.OK, res.Failures)
			}
		})
	}
}
