package bench

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"regexp"
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

// Keys of the Redis comparison (redis-benchmark's -r) and its numbers of
// concurrent callers (-c): a lone caller, and the 256 of a busy fleet node.
const redisKeys = 1000

var redisCallers = []int{1, 256}

// BenchmarkRedisClients runs the store's decision script (take.lua) b.N
// times over 1,000 keys through each client, from 1 caller and from 256,
// and redis-benchmark on the same server, one after the other, and reports
// each one's rate in ops/s (decisions, or redis-benchmark's commands):
//
//	store      redisstore.Store on go-redis: batched pipelines (the SDK)
//	go-redis   one EVALSHA per decision, go-redis, no batching
//	rueidis    one EVALSHA per decision, rueidis's automatic pipelining
//	rb-trivial redis-benchmark, EVALSHA of "return 1"
//
// bench/run.sh runs it in rounds and has bench/summary give the medians and
// the ratios (bench/redis-before-after.sh: two versions, alternating); the
// targets (BENCHMARKS.md) are the store at 256 callers at least rueidis's
// rate, and at 1 caller no slower than go-redis.
func BenchmarkRedisClients(b *testing.B) {
	if _, err := exec.LookPath("redis-benchmark"); err != nil {
		b.Skip("redis-benchmark not on PATH")
	}
	srv := redistest.Start(b)
	var src []byte
	for _, f := range []string{"common.lua", "take.lua"} { // as the store puts them together
		part, err := os.ReadFile("../throttle/redisstore/" + f)
		if err != nil {
			b.Fatal(err)
		}
		src = append(src, part...)
	}
	for _, callers := range redisCallers {
		b.Run("callers="+strconv.Itoa(callers), func(b *testing.B) {
			for _, c := range redisContenders(b, srv.Addr, string(src), callers) {
				b.Run(c.name, func(b *testing.B) {
					r, err := c.run(b.N)
					if err != nil {
						b.Fatal(err)
					}
					b.ReportMetric(r, "ops/s")
				})
			}
		})
	}
}

type redisContender struct {
	name string
	run  func(n int) (perSecond float64, err error)
}

func redisContenders(b *testing.B, addr, src string, callers int) []redisContender {
	gr := redis.NewClient(&redis.Options{Addr: addr, PoolSize: callers, Protocol: 2, ContextTimeoutEnabled: true})
	b.Cleanup(func() { gr.Close() })
	ru, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, DisableCache: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(ru.Close)
	store := &redisstore.Store{Client: gr}
	grScript, ruScript := redis.NewScript(src), rueidis.NewLuaScript(src)
	lim := throttle.Limit{Burst: 1 << 30, Sustain: 1 << 30}
	// take.lua's argument for one decision: burst, sustain, align, peek and
	// now as little-endian doubles. It holds zero bytes, which
	// redis-benchmark's command line cannot carry, so redis-benchmark runs
	// only the trivial script.
	packed := packDoubles(float64(lim.Burst), float64(lim.Sustain), 0, 0, 0)
	args, ruArgs := []any{packed}, []string{packed}
	skeys, keys := make([]throttle.Key, redisKeys), make([]string, redisKeys)
	for i := range keys {
		skeys[i] = throttle.Key{User: strconv.Itoa(i), Title: "t", Scope: "profile"}
		keys[i] = "bench:{" + strconv.Itoa(i) + "}:s"
	}
	ctx := context.Background()
	return []redisContender{
		{"store", parallel(callers, func(i int) error { _, err := store.Take(ctx, skeys[i%redisKeys], lim, time.Time{}); return err })},
		{"go-redis", parallel(callers, func(i int) error { return grScript.Run(ctx, gr, keys[i%redisKeys:i%redisKeys+1], args...).Err() })},
		{"rueidis", parallel(callers, func(i int) error { return ruScript.Exec(ctx, ru, keys[i%redisKeys:i%redisKeys+1], ruArgs).Error() })},
		{"rb-trivial", redisBenchmark(addr, gr, callers, "return 1", "0")},
	}
}

// packDoubles packs v as little-endian doubles, as take.lua reads them.
func packDoubles(v ...float64) string {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	return string(b)
}

// parallel returns a run that makes n calls of do from callers goroutines
// and reports calls per second.
func parallel(callers int, do func(i int) error) func(n int) (float64, error) {
	return func(n int) (float64, error) {
		var next atomic.Int64
		var first atomic.Value
		var wg sync.WaitGroup
		start := time.Now()
		for range callers {
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

// rbRate is redis-benchmark's rate; "inf" when a tiny -n (the framework's
// first run has b.N 1) ends within its clock's resolution.
var rbRate = regexp.MustCompile(`([0-9.]+|inf) requests per second`)

// redisBenchmark returns a run of redis-benchmark sending EVALSHA of src with
// the given numkeys and arguments from callers connections over redisKeys
// random keys.
func redisBenchmark(addr string, c *redis.Client, callers int, src string, args ...string) func(n int) (float64, error) {
	return func(n int) (float64, error) {
		sha, err := c.ScriptLoad(context.Background(), src).Result()
		if err != nil {
			return 0, err
		}
		host, port, _ := strings.Cut(addr, ":")
		cmd := append([]string{"-h", host, "-p", port, "-c", strconv.Itoa(callers), "-n", strconv.Itoa(n),
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
