// Command whatifscale times the what-if replay (package whatif, what
// xblcall analyze --what-if runs) on generated traces of growing length,
// one call every 1.8 ms, so a longer trace is the same traffic for longer.
// Two traffics (-trace):
//
//   - polling: 2,000 users calling three services in turn, each user a
//     call every 3.6 s. Per user and service that is 28 calls in 300 s,
//     just over what fgrl's budget lets through under the sustain limit
//     of 30 (profile, social), so from the sixth minute on fgrl delays a
//     growing share of the calls, and then refuses some: a trace of
//     100,000 calls (3 minutes) has none delayed, one of 500,000 (15
//     minutes) 44 %. The mix of calls changes with the length.
//   - bursts: 2,500 users each sending bursts of 12 calls, 21.6 ms long,
//     to one service at a time, the next burst of the same user and
//     service 162 s later: 24 calls in any 300 s, under every sustain
//     limit, and 12 in a burst, over the burst limit of 10, so fgrl sends
//     10 of each burst at once and delays 2 until the burst window has
//     passed. The mix is the same from the first burst on, whatever the
//     length: the trace for a time per call that should not grow.
//
// Each replay runs under the soft memory limit xblcall analyze --what-if
// sets (whatif.LimitMemory); GOMEMLIMIT=off (or another limit) in the
// environment runs it without that one.
//
// Each size runs in a process of its own (so its peak memory is its own),
// the sizes alternating round by round, and each run prints a Go benchmark
// line that bench/summary reads:
//
//	BenchmarkWhatIf/trace=T/calls=N 1 <ns per call> ns/call <CPU ns per call> cpu-ns/call <share> delayed-share <MiB> peak-live-MiB <MiB> peak-rss-MiB <MiB> peak-stacks-MiB <n> peak-goroutines <s> s
//
// delayed-share is the share of the calls fgrl delayed (refused calls are
// not in it), peak-live-MiB the most the heap held after a collection
// (sampled every 10 ms from runtime/metrics), peak-rss-MiB the process's
// peak resident memory (VmHWM, Linux), peak-stacks-MiB and peak-goroutines
// the most memory the goroutines' stacks held and the most goroutines at
// once (the replay runs each call waiting for its budget on a goroutine of
// its own). Usage, from bench/:
//
//	go run ./whatifscale -rounds 3 -trace polling,bursts -calls 100000,500000,2000000
//
// and for one size's CPU profile:
//
//	go run ./whatifscale -one 500000 -trace bursts -cpuprofile cpu.out
//
// and for what the heap holds at its peak (written again each time the
// live heap passes its last writing by a tenth):
//
//	go run ./whatifscale -one 2000000 -heapprofile heap.out
//
// and for what the whole run allocated, by where:
//
//	go run ./whatifscale -one 2000000 -allocprofile allocs.out
//	go tool pprof -sample_index=alloc_space -top allocs.out
//
// and for where the resident memory goes, a line a second on standard
// error (the live heap, the heap's goal, the goroutines' stacks, the
// memory mapped and not released, and the goroutines):
//
//	go run ./whatifscale -one 2000000 -trace polling -memtrace
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/xblgo/fgrl/analyze"
	"github.com/xblgo/fgrl/whatif"
)

func main() {
	rounds := flag.Int("rounds", 3, "rounds; each runs every size once")
	sizes := flag.String("calls", "100000,500000,2000000", "the trace sizes, in calls")
	traces := flag.String("trace", "polling,bursts", "the traffics (polling, bursts); with -one, one of them")
	one := flag.Int("one", 0, "run one replay of this many calls in this process and print its line (what each round runs)")
	cpuprofile := flag.String("cpuprofile", "", "with -one: write the replay's CPU profile to this file")
	heapprofile := flag.String("heapprofile", "", "with -one: write the heap profile at the live heap's peak to this file")
	allocprofile := flag.String("allocprofile", "", "with -one: write the profile of what the whole run allocated (go tool pprof -sample_index=alloc_space) to this file")
	memtrace := flag.Bool("memtrace", false, "with -one: print the memory's classes every second on standard error")
	flag.Parse()
	if *one > 0 {
		if err := replay(*one, *traces, *cpuprofile, *heapprofile, *allocprofile, *memtrace); err != nil {
			fmt.Fprintln(os.Stderr, "whatifscale:", err)
			os.Exit(1)
		}
		return
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "whatifscale:", err)
		os.Exit(1)
	}
	for range *rounds {
		for _, tr := range strings.Split(*traces, ",") {
			for _, n := range strings.Split(*sizes, ",") {
				cmd := exec.Command(self, "-one", n, "-trace", tr)
				cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
				if err := cmd.Run(); err != nil {
					fmt.Fprintln(os.Stderr, "whatifscale:", tr, n, "calls:", err)
					os.Exit(1)
				}
			}
		}
	}
}

// urls and methods are the three services' calls of both traffics.
var (
	urls    = [...]string{"https://userpresence.xboxlive.com/users/xuid(2533274791234567)", "https://profile.xboxlive.com/users/batch/profile/settings", "https://social.xboxlive.com/users/me/people"}
	methods = [...]string{"GET", "POST", "GET"}
)

// traffic returns, for the i-th call of a trace, its user and service
// (an index of urls), and how many users the trace has.
func traffic(name string) (func(i int) (user, service int), int, error) {
	switch name {
	case "polling":
		const users = 2000
		return func(i int) (int, int) { return i % users, i % 3 }, users, nil
	case "bursts":
		const users, burst = 2500, 12
		return func(i int) (int, int) { b := i / burst; return b % users, (b / users) % 3 }, users, nil
	}
	return nil, 0, fmt.Errorf("unknown trace %q (polling, bursts)", name)
}

// replay generates a trace of n calls of the traffic name, replays it and
// prints its line; with a profile path, it writes the CPU profile of the
// whole run there, and with a heap profile path the heap profile at the
// live heap's peak; with an allocation profile path, the profile of what
// it allocated from start to end.
func replay(n int, name, profile, heapProfile, allocProfile string, memtrace bool) error {
	of, users, err := traffic(name)
	if err != nil {
		return err
	}
	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	auths := make([]string, users)
	for u := range auths {
		auths[u] = "XBL3.0 x=" + strconv.Itoa(u) + ";R"
	}
	var peak, peakStacks, peakGoroutines atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // the heap live after each collection, the goroutines' stacks and the goroutines, every 10 ms
		defer close(done)
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/heap/stacks:bytes"}, {Name: "/sched/goroutines:goroutines"}}
		var written uint64 // the live heap at the heap profile's last writing
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			peakStacks.Store(max(peakStacks.Load(), s[1].Value.Uint64()))
			peakGoroutines.Store(max(peakGoroutines.Load(), s[2].Value.Uint64()))
			if v := s[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
				if heapProfile != "" && v > written+written/10 {
					written = v
					writeHeapProfile(heapProfile)
				}
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	if memtrace {
		stopTrace := traceMemory()
		defer stopTrace()
	}
	defer whatif.LimitMemory()() // as xblcall analyze --what-if runs
	cpu0 := cpuTime()
	start := time.Now()
	r, err := whatif.New(nil, nil)
	if err != nil {
		return err
	}
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	for i := range n {
		u, sv := of(i)
		c := analyze.Call{Index: i, Time: t0.Add(time.Duration(i) * 1800 * time.Microsecond), Method: methods[sv], URL: urls[sv],
			Authorization: auths[u], Status: 200}
		r.Add(&c)
	}
	r.AddInput(analyze.Input{Name: "generated", Calls: n})
	res, err := r.Run(context.Background())
	if err != nil {
		return err
	}
	took, cpu := time.Since(start), cpuTime()-cpu0
	close(stop)
	<-done
	if allocProfile != "" {
		writeHeapProfile(allocProfile) // a heap profile's alloc_space counts every allocation since the start
	}
	if res.Calls != n {
		return fmt.Errorf("%d calls replayed, want %d", res.Calls, n)
	}
	fmt.Printf("BenchmarkWhatIf/trace=%s/calls=%d 1 %.0f ns/call %.0f cpu-ns/call %.3f delayed-share %.1f peak-live-MiB %.1f peak-rss-MiB %.1f peak-stacks-MiB %d peak-goroutines %.2f s\n", name, n,
		float64(took.Nanoseconds())/float64(n), float64(cpu.Nanoseconds())/float64(n), float64(res.Delayed)/float64(n), float64(peak.Load())/(1<<20), float64(peakRSS())/(1<<20),
		float64(peakStacks.Load())/(1<<20), peakGoroutines.Load(), took.Seconds())
	return nil
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakRSS is the process's peak resident memory in bytes (VmHWM), 0 where
// /proc does not say.
func peakRSS() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// writeHeapProfile writes the heap profile to path, saying on standard
// error when it cannot.
func writeHeapProfile(path string) {
	f, err := os.Create(path)
	if err == nil {
		err = pprof.WriteHeapProfile(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "whatifscale: heap profile:", err)
	}
}

// traceMemory prints the memory's classes every second on standard error
// until the function it returns is called.
func traceMemory() (stop func()) {
	done := make(chan struct{})
	go func() {
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/heap/goal:bytes"}, {Name: "/memory/classes/heap/stacks:bytes"},
			{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}, {Name: "/sched/goroutines:goroutines"}}
		mib := func(i int) float64 { return float64(s[i].Value.Uint64()) / (1 << 20) }
		t0 := time.Now()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			metrics.Read(s)
			fmt.Fprintf(os.Stderr, "%4.0fs live %5.1f MiB, goal %5.1f, stacks %5.1f, mapped less released %5.1f; %d goroutines\n",
				time.Since(t0).Seconds(), mib(0), mib(1), mib(2), mib(3)-mib(4), s[5].Value.Uint64())
		}
	}()
	return func() { close(done) }
}
