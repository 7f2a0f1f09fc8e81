package clock

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestVirtualOrder(t *testing.T) {
	v := NewVirtual(t0)
	var mu sync.Mutex
	var got []string
	log := func(s string) {
		mu.Lock()
		got = append(got, s+"@"+v.Now().Sub(t0).String())
		mu.Unlock()
	}
	ctx := context.Background()
	var stop func() bool
	// One root participant sets everything up, so that no participant can
	// sleep (and let time jump) before all are registered, as in a
	// simulation (sim's feed is the root there).
	v.Go(func() {
		stop = v.AfterFunc(5*time.Second, func() { log("f") }).Stop
		v.AfterFunc(12*time.Second, func() { log("g") })
		v.Go(func() {
			v.Sleep(ctx, 10*time.Second)
			log("a")
			v.Sleep(ctx, 10*time.Second)
			log("a2")
		})
		v.Go(func() {
			v.Sleep(ctx, 15*time.Second)
			log("b")
		})
	})
	v.Wait()
	if stop() {
		t.Error("stop after the call reported it prevented it")
	}
	want := []string{"f@5s", "a@10s", "g@12s", "b@15s", "a2@20s"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("order mismatch (-want +got):\n%s", diff)
	}
}

func TestVirtualStopAndCancel(t *testing.T) {
	v := NewVirtual(t0)
	called := false
	stop := v.AfterFunc(time.Second, func() { called = true }).Stop
	if !stop() {
		t.Error("stop before the call reported failure")
	}
	ctx, cancel := context.WithCancel(context.Background())
	var err error
	v.Go(func() {
		cancel()
		err = v.Sleep(ctx, time.Hour)
	})
	v.Wait()
	if called || err != context.Canceled {
		t.Errorf("called %v, err %v", called, err)
	}
}

// TestVirtualStoppedTimersLeaveTheQueue: a stopped timer leaves the queue
// at once (before: it stayed until its time, so a replay whose every call
// stops a 20 s attempt timeout kept 20 s of them in a queue each wake-up
// sorted through), and the queue still wakes the others in order.
func TestVirtualStoppedTimersLeaveTheQueue(t *testing.T) {
	v := NewVirtual(time.Unix(0, 0))
	var fired []int
	var stops []Stopper
	for i := range 1000 {
		stops = append(stops, v.AfterFunc(time.Duration(1000-i)*time.Second, func() { fired = append(fired, i) }))
	}
	for i, s := range stops {
		if i%100 != 0 && !s.Stop() {
			t.Fatalf("timer %d: Stop reported it stopped already", i)
		}
	}
	v.mu.Lock()
	got := v.q.Len()
	v.mu.Unlock()
	if got != 10 {
		t.Errorf("%d timers queued after stopping 990 of 1000; want 10", got)
	}
	v.Go(func() {})
	v.Wait()
	want := []int{900, 800, 700, 600, 500, 400, 300, 200, 100, 0}
	if diff := cmp.Diff(want, fired); diff != "" {
		t.Errorf("timers fired (-want +got):\n%s", diff)
	}
}
