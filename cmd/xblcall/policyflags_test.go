package main

import (
	"io"
	"testing"
	"time"

	"github.com/xblgo/fgrl/transport"
)

// TestPolicyFlags: call's policy flags set the transport.Policy fields of
// the same names, and nothing else: --no-retry sends once but keeps the
// budget's waits (as Policy.NoRetry does), --fail-fast is what never waits.
func TestPolicyFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want transport.Policy
	}{
		{nil, transport.Policy{}},
		{[]string{"--no-retry"}, transport.Policy{NoRetry: true}},
		{[]string{"--fail-fast"}, transport.Policy{FailFast: true}},
		{[]string{"--max-wait", "2m"}, transport.Policy{MaxWait: 2 * time.Minute}},
		{[]string{"--attempt-timeout", "5m"}, transport.Policy{AttemptTimeout: transport.LongCallTimeout}},
		{[]string{"--background"}, transport.Policy{Priority: transport.Background}},
		{[]string{"--rule", "mpsd-search-handle/write"}, transport.Policy{Rule: "mpsd-search-handle/write"}},
	} {
		o := new(callOpts)
		if err := callFlags(o).Parse(tc.args); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		tr := o.transport(&env{stderr: io.Discard})
		if tr.Policy != tc.want || tr.RetryWindow != transport.DefaultRetryWindow {
			t.Errorf("%v: the transport's Policy %+v and window %v, want %+v and %v", tc.args, tr.Policy, tr.RetryWindow, tc.want, transport.DefaultRetryWindow)
		}
	}
}
