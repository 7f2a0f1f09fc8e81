package transport

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/throttle"
)

func TestBudgetWaitsThenRefuses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		server := &statusCounter{base: mock.NewHandler()}
		tr := &Transport{Base: server, TitleID: title}
		ctx := context.Background()
		start := time.Now()
		for i := 0; i < 10; i++ {
			if _, err := get(t, tr, ctx, profileURL, xuid1); err != nil {
				t.Fatal(err)
			}
		}
		// The 11th call waits for the burst span (15 s + 1 s margin).
		if _, err := get(t, tr, ctx, profileURL, xuid1); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d != 16*time.Second {
			t.Errorf("11th call went after %v, want 16s", d)
		}
		for i := 0; i < 19; i++ {
			get(t, tr, ctx, profileURL, xuid1)
		}
		// 30 sent: the sustain span frees after 301 s, beyond the window.
		before := time.Now()
		_, err := get(t, tr, ctx, profileURL, xuid1)
		var te *ThrottleError
		if !errors.As(err, &te) || !te.Local || te.Sent || te.Wait <= 20*time.Second || time.Since(before) != 0 {
			t.Fatalf("31st call: %v (%+v), want an immediate local refusal", err, te)
		}
		if n := server.count(429); n != 0 {
			t.Errorf("server answered %d 429s, want 0", n)
		}
		snap, err := tr.Snapshot(throttle.Key{User: mock.UserHash(xuid1), Scope: "profile"})
		if err != nil || snap.Sustain.Count != 30 || snap.Sustain.Limit != 30 || snap.Wait <= 0 {
			t.Errorf("Snapshot = %+v, %v", snap, err)
		}
		if st := tr.Stats(); st.LocalRefusals != 1 || st.Attempts != 30 || st.Waits == 0 {
			t.Errorf("Stats = %+v", st)
		}
	})
}

// TestSharedBudget: two transports sharing one store stay within one budget.
func TestSharedBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		server := &statusCounter{base: mock.NewHandler()}
		shared := &throttle.MemoryBudgetStore{Margin: time.Second}
		a := &Transport{Base: server, TitleID: title, Budget: shared, RetryWindow: -1}
		b := &Transport{Base: server, TitleID: title, Budget: shared, RetryWindow: -1}
		ok := 0
		for i := 0; i < 20; i++ {
			tr := a
			if i%2 == 1 {
				tr = b
			}
			if _, err := get(t, tr, context.Background(), profileURL, xuid1); err == nil {
				ok++
			}
		}
		if ok != 10 || server.count(429) != 0 {
			t.Errorf("%d calls went, %d server 429s; want exactly the burst 10 and none", ok, server.count(429))
		}
	})
}

func TestShadowMode(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		server := &statusCounter{base: mock.NewHandler()}
		tr := &Transport{Base: server, TitleID: title, Shadow: true, RetryWindow: -1}
		for i := 0; i < 11; i++ {
			get(t, tr, context.Background(), profileURL, xuid1)
		}
		if st := tr.Stats(); st.ShadowRefusals != 1 || st.Attempts != 11 || server.count(429) != 1 {
			t.Errorf("Stats = %+v, server 429s %d; want 1 shadow refusal, all 11 sent", st, server.count(429))
		}
	})
}

// TestRateLimitResync: another client spent most of the budget; the
// RateLimit headers of one answer bring this transport up to date, so it
// never collects a 429.
func TestRateLimitResync(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := mock.NewHandler()
		for i := 0; i < 9; i++ {
			get(t, h, context.Background(), profileURL, xuid1) // someone else, same user
		}
		server := &statusCounter{base: h}
		tr := &Transport{Base: server, TitleID: title, RetryWindow: -1}
		if _, err := get(t, tr, context.Background(), profileURL, xuid1); err != nil {
			t.Fatal(err)
		}
		_, err := get(t, tr, context.Background(), profileURL, xuid1)
		var te *ThrottleError
		if !errors.As(err, &te) || !te.Local || server.count(429) != 0 {
			t.Errorf("after resync: %v, server 429s %d; want a local refusal and none", err, server.count(429))
		}
	})
}

// TestWorkedExampleThroughTransport drives the pattern of the worked example on the Xbox services "Fine-Grained Rate Limiting" page (burst 30,
// sustain 100) through the transport: the service that refused 53 of 148
// calls refuses none, because the budget holds back or refuses them first.
func TestWorkedExampleThroughTransport(t *testing.T) {
	limits, err := limits.Read(strings.NewReader(`{"rules": [{"service": "profile", "hosts": ["profile.xboxlive.com"], "burst": 30, "sustain": 100}]}`))
	if err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		server := &statusCounter{base: mock.Must(mock.New(mock.Config{Limits: limits}))}
		tr := &Transport{Base: server, TitleID: title, Limits: limits}
		start := time.Now()
		var wg sync.WaitGroup
		var mu sync.Mutex
		delivered, refused := 0, 0
		for _, iv := range []struct{ at, requests int }{{0, 35}, {15, 28}, {30, 21}, {45, 36}, {60, 24}, {285, 4}} {
			for i := 0; i < iv.requests; i++ {
				time.Sleep(time.Until(start.Add(time.Duration(iv.at)*time.Second + time.Duration(i)*10*time.Second/time.Duration(iv.requests))))
				wg.Go(func() {
					_, err := get(t, tr, context.Background(), profileURL, xuid1)
					mu.Lock()
					defer mu.Unlock()
					if err == nil {
						delivered++
					} else {
						refused++
					}
				})
			}
		}
		wg.Wait()
		t.Logf("worked example through the transport: %d delivered, %d refused locally, %d server 429s", delivered, refused, server.count(429))
		if server.count(429) != 0 || delivered+refused != 148 || delivered < 90 {
			t.Errorf("%d delivered, %d refused, %d server 429s", delivered, refused, server.count(429))
		}
	})
}

// TestCancelledWaitsGiveSlotsBack: calls that book a budget slot, wait for it
// and are cancelled give it back, so the local count stays what the service
// counted. Of 20 calls after 10 sent, 10 book the slots of the next burst
// window and wait, 10 are refused (no slot inside their window); cancelling
// the waits leaves the sustain count at 10, not 20 (it was 21 of 30 before).
func TestCancelledWaitsGiveSlotsBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := mock.NewHandler()
		tr := &Transport{Base: h, TitleID: title}
		for range 10 {
			if _, err := get(t, tr, context.Background(), profileURL, xuid1); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 20)
		for range 20 {
			go func() { _, err := get(t, tr, ctx, profileURL, xuid1); done <- err }()
		}
		time.Sleep(time.Second)
		synctest.Wait() // every call waits for its booked slot
		cancel()
		cancelled := 0
		for range 20 {
			err := <-done
			var te *ThrottleError
			switch {
			case errors.Is(err, context.Canceled):
				cancelled++
			case !errors.As(err, &te) || !te.Local:
				t.Errorf("call: %v, want cancelled or refused locally", err)
			}
		}
		if cancelled != 10 {
			t.Errorf("%d waits cancelled, want 10", cancelled)
		}
		snap, err := tr.Snapshot(throttle.Key{User: mock.UserHash(xuid1), Scope: "profile"})
		if err != nil {
			t.Fatal(err)
		}
		served, _ := h.Counts(throttle.Key{User: mock.UserHash(xuid1), Title: title, Scope: "profile"})
		if snap.Sustain.Count != 10 || served.Sustain.Count != 10 {
			t.Errorf("local sustain count %d, service %d; want both 10", snap.Sustain.Count, served.Sustain.Count)
		}
	})
}
