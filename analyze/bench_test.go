package analyze

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// benchEntries is the size of the generated trace: FGRL_BENCH_HAR_ENTRIES,
// else 20,000 (a smoke run); BENCHMARKS.md records 2,000,000.
func benchEntries() int {
	if n, err := strconv.Atoi(os.Getenv("FGRL_BENCH_HAR_ENTRIES")); err == nil && n > 0 {
		return n
	}
	return 20_000
}

var (
	benchFileOnce sync.Once
	benchFile     string
	benchFileSize int64
)

// benchHAR writes, once per run, a HAR of n entries of about 640 bytes (a
// browser's export of a game's calls: 50 users, 5 services, a 429 in 97,
// a batch body in 10), to a file that outlives the benchmark's temp dir.
func benchHAR(b *testing.B) (string, int64) {
	benchFileOnce.Do(func() {
		dir, err := os.MkdirTemp("", "fgrl-bench-har")
		if err != nil {
			b.Fatal(err)
		}
		benchFile = filepath.Join(dir, "trace.har")
		f, err := os.Create(benchFile)
		if err != nil {
			b.Fatal(err)
		}
		w := bufio.NewWriterSize(f, 1<<20)
		hosts := []string{"profile", "social", "userpresence", "achievements", "leaderboards"}
		w.WriteString(`{"log":{"version":"1.2","creator":{"name":"bench","version":"1"},"entries":[`)
		start := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
		for i := range benchEntries() {
			if i > 0 {
				w.WriteByte(',')
			}
			status, retry := 200, ""
			if i%97 == 0 {
				status, retry = 429, `,{"name":"Retry-After","value":"5"}`
			}
			method, post, url := "GET", "", fmt.Sprintf("https://%s.xboxlive.com/users/xuid(25332747912%05d)/x?n=%d", hosts[i%5], i%50, i%7)
			if i%10 == 0 {
				method, url = "POST", "https://profile.xboxlive.com/users/batch/profile/settings"
				post = `,"postData":{"mimeType":"application/json","text":"{\"userIds\":[\"1\",\"2\"]}"}`
			}
			fmt.Fprintf(w, `{"startedDateTime":"%s","time":21.5,"request":{"method":"%s","url":"%s","httpVersion":"HTTP/1.1","headers":[{"name":"Authorization","value":"XBL3.0 x=%d;REDACTED"},{"name":"x-xbl-contract-version","value":"2"},{"name":"Accept","value":"application/json"}],"queryString":[],"cookies":[],"headersSize":-1,"bodySize":0%s},"response":{"status":%d,"statusText":"","httpVersion":"HTTP/1.1","headers":[{"name":"Content-Type","value":"application/json"}%s],"cookies":[],"content":{"size":0,"mimeType":"application/json"},"redirectURL":"","headersSize":-1,"bodySize":0},"cache":{},"timings":{"send":0,"wait":21,"receive":0.5}}`,
				start.Add(time.Duration(i)*5*time.Millisecond).Format(time.RFC3339Nano), method, url, i%50, post, status, retry)
		}
		w.WriteString(`]}}`)
		if err := w.Flush(); err != nil {
			b.Fatal(err)
		}
		f.Close()
		st, _ := os.Stat(benchFile)
		benchFileSize = st.Size()
	})
	return benchFile, benchFileSize
}

// BenchmarkAnalyzeHAR reads, analyzes and reports a generated HAR, as
// xblcall analyze does. It reports the throughput and peak-heap/file, the
// most heap in use during a run (sampled every 5 ms) over the file's size.
func BenchmarkAnalyzeHAR(b *testing.B) {
	name, size := benchHAR(b)
	b.SetBytes(size)
	b.ReportAllocs()
	var peak atomic.Uint64
	stop := make(chan struct{})
	go func() {
		var ms runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
		}
	}()
	for b.Loop() {
		f, err := os.Open(name)
		if err != nil {
			b.Fatal(err)
		}
		a, _ := New(nil, nil)
		in, err := ReadHAR(f, a.Add)
		f.Close()
		if err != nil || in.Calls != benchEntries() {
			b.Fatalf("%v: %d calls", err, in.Calls)
		}
		a.AddInput(in)
		if rep := a.Report(); rep.Judged != in.Calls {
			b.Fatalf("judged %d of %d", rep.Judged, in.Calls)
		}
	}
	close(stop)
	b.ReportMetric(float64(peak.Load())/float64(size), "peak-heap/file")
}

// BenchmarkReadHAR is the reader alone.
func BenchmarkReadHAR(b *testing.B) {
	name, size := benchHAR(b)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		f, err := os.Open(name)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		if _, err := ReadHAR(f, func(*Call) { n++ }); err != nil || n != benchEntries() {
			b.Fatalf("%v: %d", err, n)
		}
		f.Close()
	}
}

// BenchmarkAdd is the analyzer's cost per call, without reading.
func BenchmarkAdd(b *testing.B) {
	c := Call{Time: t0, Method: "GET", URL: "https://social.xboxlive.com/users/xuid(2533274791234567)/people?n=1",
		Authorization: "XBL3.0 x=12345;REDACTED", Status: 200}
	a, _ := New(nil, nil)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		c.Time = c.Time.Add(time.Millisecond)
		c.Index = i
		i++
		a.Add(&c)
	}
}
