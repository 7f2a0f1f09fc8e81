package clock

import (
	"context"
	"testing"
	"time"
)

// fixed is a Clock that reads one time.
type fixed struct{ Real }

func (fixed) Now() time.Time { return time.Unix(0, 0) }

func TestRealAndFrom(t *testing.T) {
	if _, ok := From(context.Background()).(Real); !ok {
		t.Error("From(Background) is not Real")
	}
	if got := From(With(context.Background(), fixed{})).Now(); !got.Equal(time.Unix(0, 0)) {
		t.Errorf("From(With(c)) reads %v, not c's time", got)
	}
	if err := (Real{}).Sleep(context.Background(), 0); err != nil {
		t.Error(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := (Real{}).Sleep(ctx, time.Hour); err != context.Canceled {
		t.Errorf("Sleep on a done context: %v", err)
	}
	stop := Real{}.AfterFunc(time.Hour, func() {}).Stop
	if !stop() {
		t.Error("Real stop failed")
	}
}

// polling is a Waiter that records it was asked.
type polling struct {
	Real
	asked bool
}

func (p *polling) Wait(ctx context.Context, done <-chan struct{}) error {
	p.asked = true
	return Wait(ctx, Real{}, done)
}

func TestWait(t *testing.T) {
	done := make(chan struct{})
	close(done)
	if err := Wait(context.Background(), Real{}, done); err != nil {
		t.Errorf("Wait on a closed channel: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Wait(ctx, Real{}, make(chan struct{})); err != context.Canceled {
		t.Errorf("Wait with a cancelled context: %v, want context.Canceled", err)
	}
	p := &polling{}
	if err := Wait(context.Background(), p, done); err != nil || !p.asked {
		t.Errorf("Wait through a Waiter: %v, asked %v", err, p.asked)
	}
}
