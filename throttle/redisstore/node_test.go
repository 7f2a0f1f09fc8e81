package redisstore

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestCircuit: a node marked down fails its keys at once, with an error that
// names it; once its pause is over, one call goes through as the probe and
// the next ones still fail at once, until the probe's batch marks it up or
// down again.
func TestCircuit(t *testing.T) {
	tests := []struct {
		name  string
		addr  string
		until time.Time // downUntil; zero when up
		want  []string  // per call: "" when admitted, else a text of its error
	}{
		{"up", "", time.Time{}, []string{"", ""}},
		{"down, a single server", "", time.Now().Add(time.Hour), []string{"redis unavailable: Redis is down; it is tried again within 1s"}},
		{"down, a cluster node", "10.0.0.1:7000", time.Now().Add(time.Hour), []string{"Redis node 10.0.0.1:7000 is down"}},
		{"pause over: one probe", "", time.Now().Add(-time.Millisecond), []string{"", "is down", "is down"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := &node{addr: tt.addr}
			if !tt.until.IsZero() {
				n.downUntil.Store(tt.until.UnixNano())
			}
			for i, want := range tt.want {
				err := n.admit()
				switch {
				case want == "" && err != nil:
					t.Errorf("call %d: %v, want it admitted", i, err)
				case want != "" && (err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, ErrUnavailable)):
					t.Errorf("call %d: %v, want an ErrUnavailable saying %q", i, err, want)
				}
			}
		})
	}
}
