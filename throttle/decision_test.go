package throttle

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestDecide: the limiter of a refused request is the limit whose window
// ends last; when both end together, sustain, the longer period.
func TestDecide(t *testing.T) {
	w := func(reset time.Duration) WindowState { return WindowState{Count: 3, Limit: 2, Reset: reset} }
	tests := []struct {
		name                   string
		burstOver, sustainOver bool
		burst, sustain         time.Duration
		limiter                Period
		retry                  time.Duration
	}{
		{"allowed", false, false, 10 * time.Second, 100 * time.Second, None, 0},
		{"burst over", true, false, 10 * time.Second, 100 * time.Second, Burst, 10 * time.Second},
		{"sustain over", false, true, 10 * time.Second, 100 * time.Second, Sustain, 100 * time.Second},
		{"both, sustain ends last", true, true, 10 * time.Second, 100 * time.Second, Sustain, 100 * time.Second},
		{"both, burst ends last", true, true, 14 * time.Second, 9 * time.Second, Burst, 14 * time.Second},
		{"both, ending together", true, true, 14 * time.Second, 14 * time.Second, Sustain, 14 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Decide(tt.burstOver, tt.sustainOver, w(tt.burst), w(tt.sustain))
			want := Decision{Counts: Counts{Burst: w(tt.burst), Sustain: w(tt.sustain)}, Allowed: tt.limiter == None, Limiter: tt.limiter, RetryAfter: tt.retry}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Decide mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
