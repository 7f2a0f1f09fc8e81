package main

import (
	"strings"
	"testing"
)

// TestSimulateSubscribed: simulate puts polling (naive, fgrl) beside the
// subscribed client for examples/polling.csv: the subscription sends 3
// requests where polling sends 720 (naive) or 572 (fgrl).
func TestSimulateSubscribed(t *testing.T) {
	t.Parallel()
	code, out, errs := xblcall(t, "simulate", "--pattern", "../../examples/polling.csv", "--client", "naive,fgrl,subscribed")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"client  calls  sent  served  server 429s  refused locally  failed  subscriptions  pushed, not polled",
		"naive    720   720     560          160                0       0              0                   0",
		"fgrl    720   572     572            0              148       0              0                   0",
		"subscribed    720     3     720            0                0       0              3                 717",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("simulate lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"naive,naive", "naive,", "subscribed,bogus"} {
		if code, _, _ := xblcall(t, "simulate", "--client", bad); code != 2 {
			t.Errorf("--client %s: exit %d, want 2", bad, code)
		}
	}
}
