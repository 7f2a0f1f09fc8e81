package transport_test

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/throttle"
	"github.com/xblgo/fgrl/transport"
)

// TestTicker: a ticker at the planner's interval for social (10 s) ticks
// exactly every 10 s while the key's budget holds; when other calls of the
// same user have spent the sustain window, it waits for the window to free
// a call; the service never answers 429.
func TestTicker(t *testing.T) {
	const xuid, title = "2533274790000001", "1234567890"
	key := throttle.Key{User: mock.UserHash(xuid), Scope: "social"}
	setup := func() (*transport.Transport, func() int) {
		tr := &transport.Transport{Base: mock.NewHandler(), TitleID: title}
		client := &http.Client{Transport: tr}
		return tr, func() int {
			req, _ := http.NewRequest("GET", "https://social.xboxlive.com/users/me/people", nil)
			req.Header.Set("Authorization", mock.Token(xuid, title))
			resp, err := client.Do(req)
			if err != nil {
				return 0
			}
			resp.Body.Close()
			return resp.StatusCode
		}
	}
	synctest.Test(t, func(t *testing.T) {
		tr, call := setup()
		tk, err := tr.NewTicker(key, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer tk.Stop()
		start := time.Now()
		var at []time.Duration
		for range 4 {
			<-tk.C
			at = append(at, time.Since(start))
			if s := call(); s != 200 {
				t.Fatalf("a paced call: %d", s)
			}
		}
		if want := []time.Duration{0, 10 * time.Second, 20 * time.Second, 30 * time.Second}; !equal(at, want) {
			t.Errorf("ticks at %v, want %v", at, want)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		tr, call := setup()
		start := time.Now()
		for range 30 { // another part of the app spends the sustain window (30 in 300 s)
			if s := call(); s != 200 {
				t.Fatalf("a flood call: %d", s)
			}
		}
		tk, err := tr.NewTicker(key, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer tk.Stop()
		<-tk.C
		waited := time.Since(start)
		if s := call(); s != 200 || waited < 300*time.Second {
			t.Errorf("the first tick with the budget spent came at %v with %d; want it once the 300 s window freed a call, answered 200", waited, s)
		}
		if st := tr.Stats(); st.Server429s != 0 {
			t.Errorf("%d 429s from the service", st.Server429s)
		}
	})
}

func equal(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// hungStore is a shared budget store that answers nothing until its
// caller's context ends.
type hungStore struct{}

func (hungStore) Reserve(ctx context.Context, _ throttle.Key, _ throttle.Limit, _ time.Time, _ time.Duration) (throttle.Admission, error) {
	<-ctx.Done()
	return throttle.Admission{}, ctx.Err()
}
func (hungStore) Release(ctx context.Context, _ throttle.Key, _ throttle.Limit, _ int64) error {
	<-ctx.Done()
	return ctx.Err()
}
func (hungStore) Block(ctx context.Context, _ throttle.Key, _, _ time.Time) error {
	<-ctx.Done()
	return ctx.Err()
}
func (hungStore) Sync(ctx context.Context, _ throttle.Key, _ throttle.Limit, _ time.Time, _ throttle.Period, _ int, _ time.Duration) error {
	<-ctx.Done()
	return ctx.Err()
}
func (hungStore) Snapshot(ctx context.Context, _ throttle.Key, _ throttle.Limit, _ time.Time) (throttle.Snapshot, error) {
	<-ctx.Done()
	return throttle.Snapshot{}, ctx.Err()
}

// TestTickerStopsWithAHungStore: a ticker over a shared budget store that
// hangs (an outside attack's find): NewTicker read the store to check the
// key's scope, and the ticker's wait for the budget read it with
// context.Background, so both NewTicker and Stop waited for ever. Now
// NewTicker checks the scope in the limits, and Stop ends the store's read
// with the ticker's context; a scope the limits lack is still refused.
func TestTickerStopsWithAHungStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := &transport.Transport{Base: mock.NewHandler(), TitleID: "1234567890", Budget: hungStore{}}
		if _, err := tr.NewTicker(throttle.Key{User: "1", Scope: "no-such-scope"}, time.Second); err == nil {
			t.Error("a ticker for a scope the limits lack")
		}
		tk, err := tr.NewTicker(throttle.Key{User: "1", Scope: "social"}, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		synctest.Wait() // the ticker is in the store's read
		tk.Stop()
	})
}
