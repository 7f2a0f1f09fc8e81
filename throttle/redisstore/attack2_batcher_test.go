package redisstore

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestBatcherCancelRace: 6,000 decisions from 300 goroutines through one
// batcher whose exec takes 0 to 300 µs, each caller's context cancelled at
// a random moment (often while queued, sometimes just as a leader takes the
// queue). Every decision must be sent at most once; one sent must be marked
// sent (job.sent) before its caller can return, so that a caller that gets
// its context's error knows whether Redis may have run it (Store.Reserve
// then gives back its slot); one that gets an answer must get its own;
// every caller returns; and the batcher ends idle (no batch running,
// nobody queued).
func TestBatcherCancelRace(t *testing.T) {
	var b batcher
	var sends sync.Map // *job -> *atomic.Int32
	var batches, shared atomic.Int64
	exec := func(ctx context.Context, batch []*job) {
		res := make([]result, len(batch))
		if ctx.Err() != nil { // go-redis sends nothing on an ended context
			for i := range res {
				res[i].err = ctx.Err()
			}
			settle(batch, res)
			return
		}
		batches.Add(1)
		if len(batch) > 1 {
			shared.Add(1)
		}
		for i, j := range batch {
			n, _ := sends.Load(j)
			n.(*atomic.Int32).Add(1)
			res[i].res = []int64{int64(j.args[0])}
		}
		time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond)
		settle(batch, res)
	}
	var bad atomic.Int64
	var wg sync.WaitGroup
	for g := range 300 {
		wg.Go(func() {
			for i := range 20 {
				j := &job{args: []byte{byte(g + i)}}
				n := new(atomic.Int32)
				sends.Store(j, n)
				ctx, cancel := context.WithCancel(context.Background())
				if rand.IntN(2) == 0 {
					time.AfterFunc(time.Duration(rand.IntN(400))*time.Microsecond, cancel)
				}
				done := make(chan struct{})
				var res []int64
				var err error
				go func() { res, err = b.run(ctx, j, exec); close(done) }()
				select {
				case <-done:
				case <-time.After(10 * time.Second):
					t.Errorf("a caller never returned")
					bad.Add(1)
					cancel()
					return
				}
				cancel()
				if err != nil { // a decision its caller left may still be on its way
					for end := time.Now().Add(5 * time.Second); j.sent.Load() && n.Load() == 0 && time.Now().Before(end); {
						time.Sleep(time.Millisecond)
					}
				}
				switch sent := n.Load(); {
				case sent > 1:
					t.Errorf("a decision sent %d times", sent)
					bad.Add(1)
				case sent != 0 && !j.sent.Load():
					t.Errorf("a decision sent, yet not marked sent: its caller (%v) would not give back its slot", err)
					bad.Add(1)
				case err != nil && !errors.Is(err, context.Canceled):
					t.Errorf("error %v", err)
					bad.Add(1)
				case err == nil && (sent != 1 || len(res) != 1 || res[0] != int64(byte(g+i))):
					t.Errorf("an answer %v for a decision sent %d times", res, sent)
					bad.Add(1)
				}
				if bad.Load() > 5 {
					return
				}
			}
		})
	}
	wg.Wait()
	idle := func() bool { // a batch of callers who all left may still be running
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.leaders == 0 && len(b.pending) == 0
	}
	for end := time.Now().Add(5 * time.Second); !idle() && time.Now().Before(end); {
		time.Sleep(time.Millisecond)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.leaders != 0 || len(b.pending) != 0 {
		t.Errorf("batcher after every caller returned: %d leaders, %d queued; want 0, 0", b.leaders, len(b.pending))
	}
	t.Logf("%d batches sent, %d shared by several callers", batches.Load(), shared.Load())
}
