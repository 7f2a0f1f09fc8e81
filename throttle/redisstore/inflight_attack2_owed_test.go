package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/xblgo/fgrl/internal/redistest"
	"github.com/xblgo/fgrl/throttle"
)

// TestInflight2OwedReleaseAgeSurvivesRepay (claim 2): an owed release is dropped
// once its admission no longer counts; one paid while the node is only
// briefly up, and refused again, was owed anew with the time of its new
// refusal, so on a flapping node it was never dropped. It keeps its end.
func TestInflight2OwedReleaseAgeSurvivesRepay(t *testing.T) {
	s := &Store{Client: redis.NewClient(&redis.Options{Addr: redistest.Silent(t), MaxRetries: -1}), Timeout: 50 * time.Millisecond}
	defer s.Client.Close()
	k := throttle.Key{User: "u"}
	l := throttle.Limit{Burst: 1, Sustain: 1}
	n, err := s.node(context.Background(), s.key(k, "log"))
	if err != nil {
		t.Fatal(err)
	}
	until := time.Now().Add(time.Second) // its admission counts for one more second
	n.owe(owed{ctx: context.Background(), k: k, l: l, id: 9, until: until})
	s.payOwed(n, time.Now()) // the node was found up a moment; the release is refused again
	for end := time.Now().Add(3 * time.Second); s.undoing.Load() != 0 && time.Now().Before(end); {
		time.Sleep(5 * time.Millisecond)
	}
	o := n.takeOwed()
	if len(o) != 1 {
		t.Fatalf("%d owed after the second refusal; want 1", len(o))
	}
	if !o[0].until.Equal(until) {
		t.Errorf("a release owed until %v is owed again until %v: past the window its admission counts in", until.Format(time.StampMilli), o[0].until.Format(time.StampMilli))
	}
}
