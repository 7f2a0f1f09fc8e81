// Command whatifscale times the what-if replay (package whatif, what
// xblcall analyze --what-if runs) on generated traces of growing length:
// 2,000 users calling three services in turn, one call every 1.8 ms, so a
// longer trace is the same traffic for longer. Each size runs in a process
// of its own (so its peak memory is its own), the sizes alternating round
// by round, and each run prints a Go benchmark line that bench/summary
// reads:
//
//	BenchmarkWhatIf/calls=N 1 <ns per call> ns/call <CPU ns per call> cpu-ns/call <MiB> peak-live-MiB <MiB> peak-rss-MiB <s> s
//
// peak-live-MiB is the most the heap held after a collection (sampled
// every 10 ms from runtime/metrics), peak-rss-MiB the process's peak
// resident memory (VmHWM, Linux). Usage, from bench/:
//
//	go run ./whatifscale -rounds 3 -calls 100000,500000,2000000
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
	one := flag.Int("one", 0, "run one replay of this many calls in this process and print its line (what each round runs)")
	flag.Parse()
	if *one > 0 {
		if err := replay(*one); err != nil {
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
		for _, n := range strings.Split(*sizes, ",") {
			cmd := exec.Command(self, "-one", n)
			cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
			if err := cmd.Run(); err != nil {
				fmt.Fprintln(os.Stderr, "whatifscale:", n, "calls:", err)
				os.Exit(1)
			}
		}
	}
}

// replay generates a trace of n calls, replays it and prints its line.
func replay(n int) error {
	const users = 2000
	urls := [...]string{"https://userpresence.xboxlive.com/users/xuid(2533274791234567)", "https://profile.xboxlive.com/users/batch/profile/settings", "https://social.xboxlive.com/users/me/people"}
	methods := [...]string{"GET", "POST", "GET"}
	auths := make([]string, users)
	for u := range auths {
		auths[u] = "XBL3.0 x=" + strconv.Itoa(u) + ";R"
	}
	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // the heap live after each collection, every 10 ms
		defer close(done)
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	cpu0 := cpuTime()
	start := time.Now()
	r, err := whatif.New(nil, nil)
	if err != nil {
		return err
	}
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	for i := range n {
		c := analyze.Call{Index: i, Time: t0.Add(time.Duration(i) * 1800 * time.Microsecond), Method: methods[i%3], URL: urls[i%3],
			Authorization: auths[i%users], Status: 200}
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
	if res.Calls != n {
		return fmt.Errorf("%d calls replayed, want %d", res.Calls, n)
	}
	fmt.Printf("BenchmarkWhatIf/calls=%d 1 %.0f ns/call %.0f cpu-ns/call %.1f peak-live-MiB %.1f peak-rss-MiB %.2f s\n", n,
		float64(took.Nanoseconds())/float64(n), float64(cpu.Nanoseconds())/float64(n), float64(peak.Load())/(1<<20), float64(peakRSS())/(1<<20), took.Seconds())
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
