package replay

import (
	"context"
	"errors"
	"net/http"
	"runtime/metrics"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/leakcheck"
	"github.com/xblgo/fgrl/limits"
	"go.uber.org/goleak"
)

// goroutinesCreated is the process's goroutines created so far.
func goroutinesCreated() uint64 {
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestAttack4CancelWorksThroughQueuedCalls: 2,000,000 calls at one instant
// (replay.MaxCalls, a legal `xblcall simulate` pattern), cancelled once
// 20,000 have ended. Promised: Run's godoc, "When ctx ends, the calls
// not yet started are not made and Run returns ctx's error with what
// the run counted until then", and RELIABILITY.md: a cancelled replay
// "returns the context's error at once". The calls queued are not made,
// but Run still takes each of them off the queue on a goroutine of its
// own (runner.work: pop, r.call returns at once, `go r.work()`) before
// it returns: the work after the cancel grows with the calls queued
// (about 1.98 M goroutines, 0.6–0.8 s here, several seconds under
// -race), not with the calls under way. Measured by goroutines created
// between the cancel and Run's return, not by wall-clock time.
func TestAttack4CancelWorksThroughQueuedCalls(t *testing.T) {
	const n, cancelAt = MaxCalls, 20_000
	for _, client := range []string{"naive", "fgrl"} {
		t.Run(client, func(t *testing.T) {
			p := Pattern{{At: 0, Service: "profile", User: "2533274790000001", Count: n}}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var calls atomic.Int64
			var r *runner
			var queued int
			var createdAtCancel uint64
			var cancelledAt time.Time
			o := Options{Limits: limits.Default(), Client: client, NoKeys: true,
				onRunner: func(x *runner) { r = x },
				OnCall: func(*Event, bool) {
					if calls.Add(1) == cancelAt {
						r.mu.Lock()
						for _, q := range r.queue {
							queued += q.n
						}
						r.mu.Unlock()
						createdAtCancel = goroutinesCreated()
						cancelledAt = time.Now()
						cancel()
					}
				}}
			_, err := Run(ctx, p, o)
			created := goroutinesCreated() - createdAtCancel
			took := time.Since(cancelledAt)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err %v; want context.Canceled", err)
			}
			t.Logf("%d calls queued at the cancel; %d goroutines created after it; Run returned %v after it", queued, created, took)
			if created > 10_000 {
				t.Errorf("%d goroutines created between the cancel and Run's return (%d calls queued, none of them made, %v): the work after a cancel grows with the calls queued, not the calls under way", created, queued, took.Round(time.Millisecond))
			}
		})
	}
}

// TestAttack4CancelledResultCountsCallsMade: a run cancelled after 10 of
// 100,000 calls. Promised: Run's godoc, "Run returns ctx's error with
// what the run counted until then", and Result.Calls is "calls the
// pattern made". The cancelled Result's Calls is the pattern's 100,000,
// though the run counted 10 calls (Interactive.Calls + Background.Calls,
// which on a run that ends equal Calls): a caller reading the partial
// Result is told every call of the pattern was made.
func TestAttack4CancelledResultCountsCallsMade(t *testing.T) {
	p := Pattern{{At: 0, Service: "profile", User: "2533274790000001", Count: 100_000}}
	// On a complete run the two agree.
	full, err := Run(context.Background(), Pattern{{At: 0, Service: "profile", User: "2533274790000001", Count: 1000}}, Options{Limits: limits.Default(), Client: "fgrl"})
	if err != nil || full.Calls != full.Interactive.Calls+full.Background.Calls {
		t.Fatalf("complete run: %v, Calls %d, counted %d", err, full.Calls, full.Interactive.Calls+full.Background.Calls)
	}
	for _, client := range append(Clients, Subscribed) {
		t.Run(client, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var ended atomic.Int64
			res, err := Run(ctx, p, Options{Limits: limits.Default(), Client: client, NoKeys: true,
				OnCall: func(*Event, bool) {
					if ended.Add(1) == 10 {
						cancel()
					}
				}})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err %v; want context.Canceled", err)
			}
			counted := res.Interactive.Calls + res.Background.Calls
			if res.Calls != counted {
				t.Errorf("cancelled after %d calls ended: Result.Calls %d (the pattern's), the calls counted %d (served %d, refused %d, failed %d)", ended.Load(), res.Calls, counted, res.Served, res.Refused, res.Failed)
			}
		})
	}
}

// attack4Pattern is many users' calls: reads that wait for their budget,
// duplicate reads at one instant (coalesced), and a background job's.
func attack4Pattern(users int) Pattern {
	var p Pattern
	for u := range users {
		user := strconv.Itoa(2533274790000001 + u)
		p = append(p,
			Event{At: 0, Service: "profile", User: user, Count: 40, Spread: 20 * time.Second},
			Event{At: 0, Service: "presence/read", User: user, Count: 12},
			Event{At: time.Second, Service: "achievements", User: user, Count: 30, Spread: 10 * time.Second, Background: true})
	}
	return p
}

// serviceCounter is a Base that counts the requests the service answers
// (no error) that reached it after the cancel.
type serviceCounter struct {
	next      http.RoundTripper
	cancelled *atomic.Bool
	after     *atomic.Int64
}

func (s serviceCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	late := s.cancelled.Load()
	resp, err := s.next.RoundTrip(req)
	if late && err == nil {
		s.after.Add(1)
	}
	return resp, err
}

// held: TestAttack4CancelMatrix: for every client (Clients and Subscribed),
// in 1 and 8 parts, coalescing or not, with OnStep or not, 40 users
// whose calls wait for budgets, coalesce and run as background jobs,
// cancelled once 1,600 of their 3,280 calls have ended. Promised (Run's godoc): "When
// ctx ends, the calls not yet started are not made and Run returns
// ctx's error". Checked: the error is the context's; no request reaches
// the service after the cancel; the calls that end after it are at most
// those under way at it (a worker each: runner.live, summed over the
// parts, plus a few that had passed their check); no goroutine is left.
func TestAttack4CancelMatrix(t *testing.T) {
	p := attack4Pattern(40)
	for _, client := range append(Clients, Subscribed) {
		for _, parts := range []int{1, 8} {
			for _, co := range []bool{false, true} {
				for _, step := range []bool{false, true} {
					name := client + "/" + strconv.Itoa(parts) + "/co=" + strconv.FormatBool(co) + "/step=" + strconv.FormatBool(step)
					t.Run(name, func(t *testing.T) {
						attack4CancelRun(t, p, Options{Limits: limits.Default(), Client: client, Parts: parts, Coalesce: co, NoKeys: true}, step, 1_600)
					})
				}
			}
		}
	}
}

// held: TestAttack4CancelWithRetryAfter: the service applies lower limits
// than the clients know (ServiceLimits, examples/drift.json: 429s with
// Retry-After, which xsapi and fgrl wait on, and fgrl learns from; one
// part), 50 users, background jobs among them, cancelled mid-run: the
// same checks as TestAttack4CancelMatrix.
func TestAttack4CancelWithRetryAfter(t *testing.T) {
	served, err := limits.Load("../examples/drift.json") // profile burst 6, presence reads 20
	if err != nil {
		t.Fatal(err)
	}
	var p Pattern
	for u := range 50 {
		user := strconv.Itoa(2533274790000001 + u)
		p = append(p,
			Event{At: 0, Service: "profile", User: user, Count: 40, Spread: 20 * time.Second},
			Event{At: 0, Service: "presence/read", User: user, Count: 25},
			Event{At: time.Second, Service: "profile", User: user, Count: 20, Spread: 5 * time.Second, Background: true})
	}
	for _, client := range append(Clients, Subscribed) {
		for _, co := range []bool{false, true} {
			t.Run(client+"/co="+strconv.FormatBool(co), func(t *testing.T) {
				attack4CancelRun(t, p, Options{Limits: limits.Default(), ServiceLimits: served, Client: client, Coalesce: co}, true, 2000)
			})
		}
	}
}

func attack4CancelRun(t *testing.T, p Pattern, o Options, step bool, at int64) {
	t.Helper()
	before := goleak.IgnoreCurrent()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var cancelled atomic.Bool
	var lateService atomic.Int64
	o.Base = func(next http.RoundTripper, _ func() time.Time) http.RoundTripper {
		return serviceCounter{next: next, cancelled: &cancelled, after: &lateService}
	}
	var mu sync.Mutex
	var runners []*runner
	o.onRunner = func(r *runner) {
		mu.Lock()
		runners = append(runners, r)
		mu.Unlock()
	}
	if step {
		o.OnStep = func(time.Time) {}
	}
	var ended, endedAfter atomic.Int64
	underWay := 0
	o.OnCall = func(*Event, bool) {
		if cancelled.Load() {
			endedAfter.Add(1)
			return
		}
		if ended.Add(1) == at {
			mu.Lock()
			for _, r := range runners {
				r.mu.Lock()
				underWay += r.live
				r.mu.Unlock()
			}
			mu.Unlock()
			cancel()
			cancelled.Store(true)
		}
	}
	done := make(chan error, 1)
	go func() {
		_, err := Run(ctx, p, o)
		done <- err
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("Run did not return within 60 s of the cancel (%d calls ended)", ended.Load())
	}
	if !cancelled.Load() {
		t.Fatalf("the run ended (%v) before %d calls had ended (%d)", err, at, ended.Load())
	}
	t.Logf("%d calls under way at the cancel, %d ended after it", underWay, endedAfter.Load())
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err %v; want context.Canceled", err)
	}
	if n := lateService.Load(); n > 0 {
		t.Errorf("%d requests reached the service after the cancel", n)
	}
	if n := endedAfter.Load(); n > int64(underWay)+int64(4*o.parts()) {
		t.Errorf("%d calls ended after the cancel; %d were under way at it", n, underWay)
	}
	goleak.VerifyNone(t, append(leakcheck.Options(), before)...)
}
