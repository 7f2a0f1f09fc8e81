package transport

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/xblgo/fgrl/internal/redistest"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/throttle/redisstore"
)

// TestFleetBudget: two transports (two processes' worth: two connections)
// sharing a Redis budget send exactly one burst between them, and keep
// working on their local budget when Redis dies.
func TestFleetBudget(t *testing.T) {
	srv := redistest.Start(t)
	server := &statusCounter{base: mock.NewHandler()}
	var logs logBuffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	fleet := []*Transport{
		{Base: server, TitleID: title, RetryWindow: -1, Logger: logger, Budget: &redisstore.Store{Client: srv.Client(), Timeout: 200 * time.Millisecond}},
		{Base: server, TitleID: title, RetryWindow: -1, Logger: logger, Budget: &redisstore.Store{Client: srv.Client(), Timeout: 200 * time.Millisecond}},
	}
	sent := 0
	for i := 0; i < 20; i++ {
		if _, err := get(t, fleet[i%2], context.Background(), profileURL, xuid1); err == nil {
			sent++
		}
	}
	if sent != 10 || server.count(429) != 0 {
		t.Errorf("fleet sent %d, server 429s %d; want 10 and 0", sent, server.count(429))
	}
	srv.Kill()
	// Another user: the local budgets take over; each process now keeps its
	// own, so calls go on, limited per process.
	ok := 0
	for i := 0; i < 12; i++ {
		if _, err := get(t, fleet[0], context.Background(), profileURL, xuid2); err == nil {
			ok++
		}
	}
	if ok != 10 {
		t.Errorf("during the outage %d calls went, want the local burst of 10", ok)
	}
	if n := strings.Count(logs.String(), "using a local budget"); n != 1 {
		t.Errorf("outage logged %d times by this transport, want 1:\n%s", n, logs.String())
	}
}

// TestFleetClusterMasterDown: four transports, each with its own store on
// one 3-master Redis Cluster, while a master is down and after it returns.
// Each logs the outage once and its end once (64 "failed" and 60
// "recovered" lines in 10 s before), calls for keys on healthy masters keep
// the shared budget, and the dead master is probed about once a second per
// store (3.7 times before). After the master returns, each transport calls
// until it has logged the recovery (which needs quietFor without an error),
// not for a fixed time: on a loaded machine a healthy node may miss the
// store's timeout too, which delays the recovery line, and a blip after it
// would be a second outage, rightly logged, that this test did not cause.
func TestFleetClusterMasterDown(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	var logs [4]logBuffer
	fleet := make([]*Transport, 4)
	stores := make([]*redisstore.Store, 4)
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) { return respond(r, 200, ""), nil })
	var probes probeCounter // commands the stores send to the master that will die
	for i := range fleet {
		cc := cl.Client()
		cc.OnNewNode(func(node *redis.Client) {
			if node.Options().Addr == cl.Masters[0].Addr {
				node.AddHook(&probes)
			}
		})
		stores[i] = &redisstore.Store{Client: cc, Timeout: 200 * time.Millisecond}
		fleet[i] = &Transport{Base: base, TitleID: title, RetryWindow: -1, Budget: stores[i],
			Logger: slog.New(slog.NewTextHandler(&logs[i], nil))}
	}
	users := make([]string, 40)
	for i := range users {
		users[i] = strconv.Itoa(2533274790000000 + i)
	}
	// traffic calls from every transport for d, or, for a transport i, until
	// done(i) says it may stop.
	traffic := func(d time.Duration, done func(i int) bool) {
		var wg sync.WaitGroup
		stop := time.Now().Add(d)
		for i, tr := range fleet {
			wg.Go(func() {
				for n := i; time.Now().Before(stop) && !done(i); n++ {
					get(t, tr, context.Background(), profileURL, users[n%len(users)])
					time.Sleep(2 * time.Millisecond)
				}
			})
		}
		wg.Wait()
	}
	never := func(int) bool { return false }
	traffic(300*time.Millisecond, never)
	cl.Masters[0].Kill()
	before := probes.n.Load()
	traffic(3*time.Second, never) // under quietFor: no recovery can be logged meanwhile
	// At most a probe a second per store, with slack for the first.
	if n := probes.n.Load() - before; n > 4*4 {
		t.Errorf("the stores sent %d commands to the dead master in 3 s of outage; want about one probe a second per store", n)
	} else {
		t.Logf("the stores sent %d commands to the dead master in 3 s of outage (4 stores)", n)
	}
	for i := range fleet {
		out := logs[i].String()
		if strings.Count(out, "failed; using a local budget") != 1 || strings.Contains(out, "recovered") {
			t.Errorf("transport %d during the outage, want one failure line:\n%s", i, out)
		}
	}
	cl.Masters[0].Restart()
	cl.WaitOK()
	// quietFor (5 s) is the least this takes; the bound only ends a test
	// whose transports never recover (runs took up to 37 s at load 40).
	var read [4]int // how much of each log recovered has read (each transport's own goroutine)
	recovered := func(i int) bool {
		out := logs[i].String() // whole lines: one Write each
		found := strings.Contains(out[read[i]:], "recovered")
		read[i] = len(out)
		return found
	}
	traffic(time.Minute, recovered)
	for i := range fleet {
		out := logs[i].String()
		if strings.Count(out, "failed; using a local budget") != 1 || strings.Count(out, "recovered") != 1 {
			t.Errorf("transport %d after the outage, want one failure and one recovery line:\n%s", i, out)
		}
		// The healthy masters answered throughout (keys on them kept the
		// shared budget): none refused a call as the cluster being down.
		if n := strings.Count(out, "CLUSTERDOWN"); n > 0 {
			t.Errorf("transport %d: %d calls refused with CLUSTERDOWN; want the healthy masters to answer throughout", i, n)
		}
	}
}

// probeCounter is a go-redis hook counting the commands and pipelines a
// node client sends.
type probeCounter struct{ n atomic.Int64 }

func (p *probeCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (p *probeCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { p.n.Add(1); return next(ctx, cmd) }
}

func (p *probeCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { p.n.Add(1); return next(ctx, cmds) }
}

// TestFleetGoodputRedis: four transports, each wanting 10 profile calls a
// second for the same user, share one budget in a real Redis against the
// mock. Together they get the whole FGRL allowance (30 per 300 s: 60 in
// 10 minutes) and the service never answers 429. Virtual time: the test
// runs in a testing/synctest bubble and the store decides with the
// transports' (virtual) time (CallerTime); the Redis client is made outside
// the bubble.
func TestFleetGoodputRedis(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client()
	const run = 10 * time.Minute
	synctest.Test(t, func(t *testing.T) {
		server := &statusCounter{base: mock.NewHandler()}
		store := &redisstore.Store{Client: rdb, CallerTime: true, Prefix: "fleet"}
		driveFleet(t, server, store, run, false)
		delivered, throttled := server.count(200), server.count(429)
		t.Logf("4 transports on one Redis budget, %v: delivered %d of the 60 FGRL allows, %d server 429s", run, delivered, throttled)
		if throttled != 0 || delivered < 57 {
			t.Errorf("delivered %d, server 429s %d; want at least 95%% of 60 and no 429", delivered, throttled)
		}
	})
}

// TestFleetGoodputRedisRealTime is the same for 2 real seconds, deciding by
// the Redis clock: the fleet gets the burst allowance (10) and no 429.
func TestFleetGoodputRedisRealTime(t *testing.T) {
	srv := redistest.Start(t)
	server := &statusCounter{base: mock.NewHandler()}
	store := &redisstore.Store{Client: srv.Client(), Prefix: "fleet-rt"}
	const run = 2 * time.Second
	driveFleet(t, server, store, run, true)
	if d, n := server.count(200), server.count(429); d != 10 || n != 0 {
		t.Errorf("delivered %d, server 429s %d in %v; want the burst allowance, 10, and no 429", d, n, run)
	}
}

// driveFleet runs 4 transports sharing store for run, each starting a
// profile call for xuid1 every 100 ms against server; with deadline, each
// call must end by the run's end.
func driveFleet(t *testing.T, server *statusCounter, store *redisstore.Store, run time.Duration, deadline bool) {
	var wg sync.WaitGroup
	start := time.Now()
	server.until = start.Add(run)
	for range 4 {
		tr := &Transport{Base: server, TitleID: title, Budget: store}
		wg.Go(func() {
			var calls sync.WaitGroup
			for time.Since(start) < run {
				ctx, cancel := context.Background(), func() {}
				if deadline {
					ctx, cancel = context.WithDeadline(ctx, start.Add(run))
				}
				calls.Go(func() { defer cancel(); get(t, tr, ctx, profileURL, xuid1) })
				time.Sleep(100 * time.Millisecond)
			}
			calls.Wait()
		})
	}
	wg.Wait()
}
