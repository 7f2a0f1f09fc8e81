package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/xblgo/fgrl/internal/redistest"
	"github.com/xblgo/fgrl/throttle"
	"github.com/xblgo/fgrl/throttle/redisstore"
)

// Callers and keys of the Redis comparison: redis-benchmark's -c and -r.
const (
	redisCallers = 50
	redisKeys    = 1000
)

// BenchmarkRedisClients runs the store's decision script (take.lua) from 50
// callers over 1,000 keys through each client, and redis-benchmark on the
// same server, in interleaved rounds, and reports each one's median rate in
// decisions (or commands) per second:
//
//	store      redisstore.Store on go-redis: batched pipelines (the SDK)
//	go-redis   one EVALSHA per decision, go-redis, no batching
//	rueidis    one EVALSHA per decision, rueidis's automatic pipelining
//	rb-trivial redis-benchmark -c 50, EVALSHA of "return 1"
//	rb-script  redis-benchmark -c 50, EVALSHA of take.lua (Redis's own cost)
//
// and the ratios store/rb-trivial (x-evalsha, the performance target),
// store/rb-script and rueidis/store. Run with -benchtime 1x: the rounds are
// inside. FGRL_BENCH_REDIS_ROUNDS and FGRL_BENCH_REDIS_N set rounds (3) and
// decisions per contender per round (60,000).
func BenchmarkRedisClients(b *testing.B) {
	if _, err := exec.LookPath("redis-benchmark"); err != nil {
		b.Skip("redis-benchmark not on PATH")
	}
	srv := redistest.Start(b)
	src, err := os.ReadFile("../throttle/redisstore/take.lua")
	if err != nil {
		b.Fatal(err)
	}
	rounds, n := envInt("FGRL_BENCH_REDIS_ROUNDS", 3), envInt("FGRL_BENCH_REDIS_N", 60000)
	cs := redisContenders(b, srv.Addr, string(src))
	rates := map[string][]float64{}
	for range rounds {
		for _, c := range cs {
			r, err := c.run(n)
			if err != nil {
				b.Fatalf("%s: %v", c.name, err)
			}
			rates[c.name] = append(rates[c.name], r)
		}
	}
	med := map[string]float64{}
	for _, c := range cs {
		med[c.name] = median(rates[c.name])
		b.ReportMetric(med[c.name], c.name+"/s")
		b.Logf("%-10s %s", c.name, spread(rates[c.name]))
	}
	b.ReportMetric(med["store"]/med["rb-trivial"], "x-evalsha")
	b.ReportMetric(med["store"]/med["rb-script"], "x-rb-script")
	b.ReportMetric(med["rueidis"]/med["store"], "rueidis/store")
}

type redisContender struct {
	name string
	run  func(n int) (perSecond float64, err error)
}

func redisContenders(b *testing.B, addr, src string) []redisContender {
	gr := redis.NewClient(&redis.Options{Addr: addr, PoolSize: redisCallers, Protocol: 2})
	b.Cleanup(func() { gr.Close() })
	ru, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, DisableCache: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(ru.Close)
	store := &redisstore.Store{Client: gr}
	grScript, ruScript := redis.NewScript(src), rueidis.NewLuaScript(src)
	lim := throttle.Limit{Burst: 1 << 30, Sustain: 1 << 30}
	args := []any{lim.Burst, lim.Sustain, 0, 0, 0}
	ruArgs := []string{strconv.Itoa(lim.Burst), strconv.Itoa(lim.Sustain), "0", "0", "0"}
	skeys, keys := make([]throttle.Key, redisKeys), make([]string, redisKeys)
	for i := range keys {
		skeys[i] = throttle.Key{User: strconv.Itoa(i), Title: "t", Scope: "profile"}
		keys[i] = "bench:{" + strconv.Itoa(i) + "}:s"
	}
	ctx := context.Background()
	return []redisContender{
		{"store", parallel(func(i int) error { _, err := store.Take(ctx, skeys[i%redisKeys], lim, time.Time{}); return err })},
		{"go-redis", parallel(func(i int) error { return grScript.Run(ctx, gr, keys[i%redisKeys:i%redisKeys+1], args...).Err() })},
		{"rueidis", parallel(func(i int) error { return ruScript.Exec(ctx, ru, keys[i%redisKeys:i%redisKeys+1], ruArgs).Error() })},
		{"rb-trivial", redisBenchmark(addr, gr, "return 1", "0")},
		{"rb-script", redisBenchmark(addr, gr, src, "1", "rb:{__rand_int__}:s", ruArgs[0], ruArgs[1], "0", "0", "0")},
	}
}

// parallel returns a run that makes n calls of do from redisCallers
// goroutines and reports calls per second.
func parallel(do func(i int) error) func(n int) (float64, error) {
	return func(n int) (float64, error) {
		var next atomic.Int64
		var first atomic.Value
		var wg sync.WaitGroup
		start := time.Now()
		for range redisCallers {
			wg.Go(func() {
				for i := next.Add(1); i <= int64(n); i = next.Add(1) {
					if err := do(int(i)); err != nil {
						first.CompareAndSwap(nil, err)
						return
					}
				}
			})
		}
		wg.Wait()
		if err, _ := first.Load().(error); err != nil {
			return 0, err
		}
		return float64(n) / time.Since(start).Seconds(), nil
	}
}

var rbRate = regexp.MustCompile(`([0-9.]+) requests per second`)

// redisBenchmark returns a run of redis-benchmark sending EVALSHA of src with
// the given numkeys and arguments from redisCallers connections over
// redisKeys random keys.
func redisBenchmark(addr string, c *redis.Client, src string, args ...string) func(n int) (float64, error) {
	return func(n int) (float64, error) {
		sha, err := c.ScriptLoad(context.Background(), src).Result()
		if err != nil {
			return 0, err
		}
		host, port, _ := strings.Cut(addr, ":")
		cmd := append([]string{"-h", host, "-p", port, "-c", strconv.Itoa(redisCallers), "-n", strconv.Itoa(n),
			"-r", strconv.Itoa(redisKeys), "-q", "evalsha", sha}, args...)
		out, err := exec.Command("redis-benchmark", cmd...).CombinedOutput()
		if err != nil {
			return 0, fmt.Errorf("%v: %s", err, out)
		}
		m := rbRate.FindAllSubmatch(out, -1)
		if len(m) == 0 {
			return 0, fmt.Errorf("no rate in %q", out)
		}
		return strconv.ParseFloat(string(m[len(m)-1][1]), 64)
	}
}

func median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	return s[len(s)/2]
}

// spread formats rates as "median (min-max)".
func spread(v []float64) string {
	s := slices.Sorted(slices.Values(v))
	return fmt.Sprintf("%.0f/s (%.0f-%.0f)", s[len(s)/2], s[0], s[len(s)-1])
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}
