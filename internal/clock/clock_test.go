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
