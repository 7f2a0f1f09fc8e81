package redisstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/redis/go-redis/v9"
	"github.com/xblgo/fgrl/internal/redistest"
	"github.com/xblgo/fgrl/throttle"
)

// TestBatcher: however many callers decide at once, a node runs at most
// maxInFlight (2) batches at a time, each of the first callers' own decision
// alone and under its own context; callers arriving meanwhile queue, and
// the queue goes whole, as one batch, to a goroutine of the batcher's,
// under a context with its oldest caller's values that no caller's end
// cancels; a queued caller whose context ends before a batch takes it
// leaves the queue, its decision never sent; callers whose contexts end
// while their batch is in flight return at once, and the batch runs on.
// Every job is settled, once.
func TestBatcher(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var b batcher
		release, releaseQueue := make(chan struct{}), make(chan struct{}) // the callers' own batches; the queue's
		type sent struct {
			size   int
			caller any   // the caller whose context the batch carries
			err    error // that context's error after every caller's ended
		}
		var mu sync.Mutex
		var batches []sent
		exec := func(ctx context.Context, batch []*job) {
			<-release
			if len(batch) > 1 {
				<-releaseQueue
			}
			mu.Lock()
			batches = append(batches, sent{len(batch), ctx.Value(callerKey{}), ctx.Err()})
			mu.Unlock()
			settle(batch, make([]result, len(batch)))
		}
		jobs := make([]*job, 10)
		cancels := make([]context.CancelFunc, len(jobs))
		errs := make([]error, len(jobs))
		var wg sync.WaitGroup
		for i := range jobs {
			jobs[i] = &job{}
			ctx, cancel := context.WithCancel(context.WithValue(context.Background(), callerKey{}, i))
			cancels[i] = cancel
			wg.Go(func() { _, errs[i] = b.run(ctx, jobs[i], exec) })
			synctest.Wait() // callers arrive in turn
		}
		if b.leaders != maxInFlight || len(b.pending) != len(jobs)-maxInFlight {
			t.Errorf("with every batch held up: %d batches running and %d callers queued, want %d and %d", b.leaders, len(b.pending), maxInFlight, len(jobs)-maxInFlight)
		}
		last := len(jobs) - 1
		cancels[maxInFlight]() // the oldest queued caller and the newest give up: they leave the queue
		cancels[last]()
		synctest.Wait()
		if len(b.pending) != len(jobs)-maxInFlight-2 || !errors.Is(errs[maxInFlight], context.Canceled) || !errors.Is(errs[last], context.Canceled) {
			t.Errorf("the oldest and newest queued callers' contexts ended: %d queued, their errors %v and %v; want %d and context.Canceled", len(b.pending), errs[maxInFlight], errs[last], len(jobs)-maxInFlight-2)
		}
		close(release) // the two alone end; the queue goes as one batch, held up
		synctest.Wait()
		if len(b.pending) != 0 {
			t.Errorf("%d callers still queued with the queue's batch sent", len(b.pending))
		}
		for _, cancel := range cancels { // every caller's end, the queue's batch in flight: they return, it runs on
			cancel()
		}
		synctest.Wait()
		for i := maxInFlight + 1; i < last; i++ {
			if !errors.Is(errs[i], context.Canceled) {
				t.Errorf("caller %d, its batch in flight when its context ended: %v; want context.Canceled at once", i, errs[i])
			}
		}
		wg.Wait()
		close(releaseQueue)
		synctest.Wait()
		slices.SortFunc(batches, func(a, b sent) int { return a.caller.(int) - b.caller.(int) }) // the two alone end in either order
		want := []sent{{1, 0, nil}, {1, 1, nil}, {6, 3, nil}}                                    // the two alone ended before any caller did; the queue's batch after every caller ended
		if diff := cmp.Diff(want, batches, cmp.AllowUnexported(sent{}), cmpopts.EquateErrors()); diff != "" {
			t.Errorf("batches (-want +got):\n%s", diff)
		}
		if b.leaders != 0 || len(b.pending) != 0 {
			t.Errorf("after every job: %d leaders, %d queued; want none", b.leaders, len(b.pending))
		}
		for i, j := range jobs[:maxInFlight] {
			if j.wake != nil {
				t.Errorf("job %d, sent at once, had a channel to wait on", i)
			}
		}
	})
}

// TestQueuedAloneKeepsItsContext: a batch of one queued caller's decision
// goes under that caller's own context, as a decision sent at once does, so
// its end is the caller's (Store.callersEnd); only a batch of several goes
// under a context no caller's end cancels.
func TestQueuedAloneKeepsItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var b batcher
		gate := make(chan struct{}) // each send lets one batch go
		type sent struct {
			size        int
			cancellable bool
		}
		var mu sync.Mutex
		var batches []sent
		exec := func(ctx context.Context, batch []*job) {
			<-gate
			mu.Lock()
			batches = append(batches, sent{len(batch), ctx.Done() != nil})
			mu.Unlock()
			settle(batch, make([]result, len(batch)))
		}
		var wg sync.WaitGroup
		call := func() {
			wg.Go(func() {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				b.run(ctx, &job{}, exec)
			})
			synctest.Wait()
		}
		call() // two alone, held
		call()
		call() // queued alone
		gate <- struct{}{}
		synctest.Wait() // one alone ends; the queue goes as a batch of one
		gate <- struct{}{}
		gate <- struct{}{}
		synctest.Wait()
		call() // two alone again, held, and two queued
		call()
		call()
		call()
		for range 3 {
			gate <- struct{}{}
			synctest.Wait()
		}
		wg.Wait()
		want := []sent{{1, true}, {1, true}, {1, true}, {1, true}, {1, true}, {2, false}}
		slices.SortFunc(batches, func(a, b sent) int { return a.size - b.size })
		if diff := cmp.Diff(want, batches, cmp.AllowUnexported(sent{})); diff != "" {
			t.Errorf("batches' sizes and whether a caller's end cancels them (-want +got):\n%s", diff)
		}
	})
}

// callerKey marks a context with the caller it came from.
type callerKey struct{}

// recorder is a go-redis hook that records the scripts a client runs (not
// the commands go-redis sends on its own, such as a new connection's HELLO),
// alone or in pipelines, and the caller each carried (callerKey); hold, when
// set, stops each send until it is closed.
type recorder struct {
	mu   sync.Mutex
	sent []sentCmd
	hold chan struct{}
}

type sentCmd struct {
	keys   int // EVALSHA's numkeys
	piped  bool
	caller any
}

func (r *recorder) DialHook(next redis.DialHook) redis.DialHook { return next }

func (r *recorder) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		r.record(ctx, []redis.Cmder{cmd}, false)
		return next(ctx, cmd)
	}
}

func (r *recorder) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		r.record(ctx, cmds, true)
		return next(ctx, cmds)
	}
}

func (r *recorder) record(ctx context.Context, cmds []redis.Cmder, piped bool) {
	r.mu.Lock()
	hold := r.hold
	scripts := false
	for _, c := range cmds {
		if c.Name() == "evalsha" || c.Name() == "eval" {
			keys, _ := strconv.Atoi(fmt.Sprint(c.Args()[2]))
			r.sent = append(r.sent, sentCmd{keys, piped, ctx.Value(callerKey{})})
			scripts = true
		}
	}
	r.mu.Unlock()
	if scripts && hold != nil {
		<-hold
	}
}

// recorded returns the scripts r saw sent, and forgets them.
func (r *recorder) recorded() []sentCmd {
	r.mu.Lock()
	defer r.mu.Unlock()
	sent := r.sent
	r.sent = nil
	return sent
}

// recordedStore returns a store on a new redis-server whose client records
// what it sends, with its connection made and its scripts loaded.
func recordedStore(t *testing.T) (*Store, *recorder) {
	t.Helper()
	srv := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { c.Close() })
	s := &Store{Client: c}
	k := throttle.Key{User: "warm", Title: "t", Scope: "s"}
	if _, err := s.Reserve(context.Background(), k, throttle.Limit{Burst: 10, Sustain: 30}, time.Time{}, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Take(context.Background(), k, throttle.Limit{Burst: 10, Sustain: 30}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	r := &recorder{}
	c.AddHook(r)
	return s, r
}

// TestLoneDecisionIsOneEvalSha: a decision that finds nothing else in flight
// is one EVALSHA sent on its caller's goroutine under its caller's context,
// as a plain go-redis EvalSha would be: no pipeline (before, it was a
// pipeline of one, under a context of the store's own).
func TestLoneDecisionIsOneEvalSha(t *testing.T) {
	s, r := recordedStore(t)
	k := throttle.Key{User: "u", Title: "t", Scope: "s"}
	l := throttle.Limit{Burst: 10, Sustain: 30}
	tests := []struct {
		name   string
		decide func(ctx context.Context) error
		keys   int
	}{
		{"take", func(ctx context.Context) error { _, err := s.Take(ctx, k, l, time.Time{}); return err }, 1},
		{"reserve", func(ctx context.Context) error { _, err := s.Reserve(ctx, k, l, time.Time{}, 0); return err }, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.decide(context.WithValue(context.Background(), callerKey{}, tt.name)); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]sentCmd{{tt.keys, false, tt.name}}, r.recorded(), cmp.AllowUnexported(sentCmd{})); diff != "" {
				t.Errorf("scripts sent (-want +got):\n%s", diff)
			}
		})
	}
}

// TestOverlappingDecisionsShareOneRun: while maxInFlight decisions are out,
// the ones arriving meanwhile queue and then go together, as one script run
// (one EVALSHA with all their keys), and each caller gets its own key's
// answer.
func TestOverlappingDecisionsShareOneRun(t *testing.T) {
	s, r := recordedStore(t)
	l := throttle.Limit{Burst: 10, Sustain: 30}
	const callers = maxInFlight + 5
	keys := make([]throttle.Key, callers)
	for i := range keys {
		keys[i] = throttle.Key{User: strconv.Itoa(i), Title: "t", Scope: "s"}
	}
	for _, k := range keys[:maxInFlight] { // counted once before, so their answers say 2
		if _, err := s.Take(context.Background(), k, l, time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	r.recorded()
	r.hold = make(chan struct{})
	var wg sync.WaitGroup
	counts := make([]int, callers)
	decide := func(i int) {
		wg.Go(func() {
			d, err := s.Take(context.Background(), keys[i], l, time.Time{})
			if err != nil {
				t.Error(err)
			}
			counts[i] = d.Burst.Count
		})
	}
	for i := range maxInFlight {
		decide(i)
	}
	for sent := 0; sent < maxInFlight; { // both held in the hook
		runtime.Gosched()
		r.mu.Lock()
		sent = len(r.sent)
		r.mu.Unlock()
	}
	for i := maxInFlight; i < callers; i++ {
		decide(i)
	}
	n, _ := s.nodes.Load("")
	for queued(n.(*node)) < callers-maxInFlight {
		runtime.Gosched()
	}
	r.mu.Lock()
	close(r.hold)
	r.hold = nil
	r.mu.Unlock()
	wg.Wait()
	want := []sentCmd{{1, false, nil}, {1, false, nil}, {callers - maxInFlight, false, nil}}
	if diff := cmp.Diff(want, r.recorded(), cmp.AllowUnexported(sentCmd{})); diff != "" {
		t.Errorf("scripts sent (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{2, 2, 1, 1, 1, 1, 1}, counts); diff != "" {
		t.Errorf("burst counts per caller (-want +got):\n%s", diff)
	}
}

// queued returns the number of decisions waiting for n's batches.
func queued(n *node) int {
	n.batch.mu.Lock()
	defer n.batch.mu.Unlock()
	return len(n.batch.pending)
}

// TestLoneDecisionEndsWithItsContext: a decision sent alone ends when its
// caller's context does or the store's Timeout passes, whichever comes
// first, against a Redis that never answers. Only the Timeout marks the node
// down (its circuit then refuses the next call at once); a caller's own
// deadline or cancellation says nothing about the node. A client that
// honours deadlines (ContextTimeoutEnabled) does not see a cancellation
// without one, so a caller that can be cancelled has its decision sent on a
// goroutine of its own, and the cancellation ends the call (before
// 2026-12-05 the Timeout did there; before that, every decision waited for
// the Timeout whatever its context said).
func TestLoneDecisionEndsWithItsContext(t *testing.T) {
	const (
		short = 10 * time.Millisecond
		long  = time.Hour
	)
	tests := []struct {
		name      string
		honour    bool // ContextTimeoutEnabled
		deadline  time.Duration
		cancel    time.Duration // 0: never
		timeout   time.Duration
		want      error
		wantAfter time.Duration
		wantDown  bool
	}{
		{"the caller's deadline first", true, short, 0, long, context.DeadlineExceeded, short, false},
		{"the caller's deadline first, a plain client", false, short, 0, long, context.DeadlineExceeded, short, false},
		{"the store's timeout first", true, long, 0, short, ErrUnavailable, short, true},
		{"the store's timeout first, a plain client", false, long, 0, short, ErrUnavailable, short, true},
		{"the caller cancels, a plain client", false, long, short, long, context.Canceled, short, false},
		{"the caller cancels, a client that sees only deadlines", true, long, short, 2 * short, context.Canceled, short, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379", Protocol: 2, DisableIdentity: true, ContextTimeoutEnabled: tt.honour,
					Dialer: func(context.Context, string, string) (net.Conn, error) {
						client, server := net.Pipe()
						go io.Copy(io.Discard, server) // reads every command, answers none
						return client, nil
					}})
				defer c.Close()
				s := &Store{Client: c, Timeout: tt.timeout}
				ctx, cancel := context.WithTimeout(context.Background(), tt.deadline)
				defer cancel()
				if tt.cancel > 0 {
					time.AfterFunc(tt.cancel, cancel)
				}
				k := throttle.Key{User: "u", Title: "t", Scope: "s"}
				l := throttle.Limit{Burst: 10, Sustain: 30}
				start := time.Now()
				_, err := s.Take(ctx, k, l, time.Time{})
				if !errors.Is(err, tt.want) || time.Since(start) != tt.wantAfter {
					t.Errorf("Take = %v after %v, want %v after %v", err, time.Since(start), tt.want, tt.wantAfter)
				}
				n, _ := s.nodes.Load("")
				if down := n.(*node).downUntil.Load() != 0; down != tt.wantDown {
					t.Errorf("node marked down: %v, want %v", down, tt.wantDown)
				}
				if tt.wantDown {
					start = time.Now()
					_, err := s.Take(context.Background(), k, l, time.Time{})
					if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "is down") || time.Since(start) != 0 {
						t.Errorf("the next Take = %v after %v, want the circuit's ErrUnavailable at once", err, time.Since(start))
					}
				}
			})
		})
	}
}
