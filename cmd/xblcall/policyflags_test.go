package main

import (
	"io"
	"strings"
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

// TestCallFlagsRefusedNotIgnored: a --max-wait past the transport's bound
// (transport.MaxPolicyWait) is refused as --attempt-timeout's is, not cut
// to it unsaid, and --via with --mock (which answers in-process) is
// refused, not ignored: exit 2, one line.
func TestCallFlagsRefusedNotIgnored(t *testing.T) {
	t.Parallel()
	prof := "https://profile.xboxlive.com/users/me/profile/settings"
	for _, args := range [][]string{
		{"call", "--mock", "--max-wait", "1h", prof},
		{"call", "--mock", "--max-wait", "5m1s", prof},
		{"call", "--mock", "--via", "127.0.0.1:1", prof},
	} {
		code, out, errs := xblcall(t, args...)
		if code != 2 || out != "" || strings.Count(errs, "\n") != 1 {
			t.Errorf("%q: exit %d, stdout %.60q, stderr %q; want 2 and one line", args, code, out, errs)
		}
	}
	if code, _, errs := xblcall(t, "call", "--mock", "--max-wait", "5m", prof); code != 0 {
		t.Errorf("--max-wait 5m: exit %d (%s), want 0", code, errs)
	}
}
