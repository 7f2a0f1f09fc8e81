package analyze

import (
	"archive/zip"
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/racebuild"
)

// traceKind is a trace of one kind, made of a head, a unit repeated n
// times (joined by sep) and a tail: many entries, or one huge string.
type traceKind struct {
	name             string
	head, unit, sep  string
	n                int
	tail             string
	bound            float64 // the most heap per input byte RELIABILITY.md states
	read             func(r *heapSampler, size int64, add func(*Call)) (Input, error)
	saz              bool // written as a .saz of n sessions instead
	wantCalls, wantN int  // calls read: wantCalls, or n*wantN
}

const (
	harEntry = `{"startedDateTime":"2026-03-01T20:00:00.5Z","time":21.5,"request":{"method":"GET","url":"https://social.xboxlive.com/users/xuid(2533274791234567)/people?n=1",` +
		`"headers":[{"name":"Authorization","value":"XBL3.0 x=7;REDACTED"},{"name":"Accept","value":"application/json"}]},"response":{"status":200,"headers":[],"content":{"size":0}},"timings":{}}`
	csvRow = `"userpresence.xboxlive.com","https://userpresence.xboxlive.com/users/xuid(2533274791234567)/devices/current/titles/current","2533274791234567","",` +
		`"User-Agent: XboxServicesAPI/2021 c  x-xbl-contract-version: 3","{""state"":""active""}","","","200","80","2026-03-01T20:00:00.000Z","false","1","false","0","","false","","","0","","",""` + "\n"
	csvHead = "v1510\n\"Host\",\"Uri\",\"XboxUserId\",\"MultiplayerCorrelationId\",\"RequestHeaders\",\"RequestBody\",\"ResponseHeaders\",\"ResponseBody\",\"HttpStatusCode\",\"EllapsedCallTimeMs\",\"ReqTimeUTC\",\"IsGet\",\"LoggerId\",\"IsShoulderTap\",\"ChangeNumber\",\"SessionReferenceUriPath\",\"IsInGameEvent\",\"EventName\",\"EventPlayerSessionId\",\"EventVersion\",\"EventDimensionData\",\"EventMeasurementData\",\"BreadCrumb\"\n"
	mib     = 1 << 20
)

// traceKinds are the kinds of input, from a file; each reads to one Input
// of wantCalls calls (or n*wantN).
func traceKinds() []traceKind {
	har := func(r *heapSampler, _ int64, add func(*Call)) (Input, error) { return ReadHAR(r, add) }
	data := func(r *heapSampler, _ int64, add func(*Call)) (Input, error) { return ReadData(r, add) }
	saz := func(r *heapSampler, size int64, add func(*Call)) (Input, error) { return ReadSAZ(r, size, add) }
	jsonCall := `{"Uri": "https://userpresence.xboxlive.com/users/xuid(2533274791234567)", "XboxUserId": "2533274791234567", "HttpStatusCode": 200, "ReqTimeUTC": ` +
		fileTimeJSON(t0) + `, "IsGet": true}`
	harHead := `{"log":{"entries":[` + harEntry + `,{"startedDateTime":"2026-03-01T20:00:01Z","request":{"method":"POST","url":"https://a.xboxlive.com/","postData":{"text":"`
	harTail := `"}},"response":{"status":200}},` + harEntry + `]}}`
	csvHugeHead, csvHugeTail := csvHead+`"h","https://h/","1","","","`, `","","","200","1","2026-03-01T20:00:00Z","true"`+"\n"+csvRow
	jsonHugeHead := `[{"Endpoint": "h", "Calls": [{"Uri": "https://h/", "HttpStatusCode": 200, "ReqTimeUTC": ` + fileTimeJSON(t0) + `, "RequestBody": "`
	jsonHugeTail := `"}]}, {"Endpoint": "userpresence.xboxlive.com", "Calls": [` + jsonCall + `]}]`
	return []traceKind{
		{name: "HAR, many entries", head: `{"log":{"entries":[`, unit: harEntry, sep: ",", n: 4 * mib / len(harEntry), tail: `]}}`, bound: 0.4, read: har, wantN: 1},
		{name: "HAR, one huge string", head: harHead, unit: strings.Repeat("x", 4096), n: 32 * mib / 4096, tail: harTail, bound: 0.1, read: har, wantCalls: 3},
		{name: ".saz, many sessions", n: 2 * mib / 700, bound: 0.6, read: saz, saz: true, wantN: 1},
		{name: "CSV data, many rows", head: csvHead, unit: csvRow, n: 4 * mib / len(csvRow), bound: 0.4, read: data, wantN: 1},
		{name: "CSV data, one huge field", head: csvHugeHead, unit: strings.Repeat("x", 4096), n: 32 * mib / 4096, tail: csvHugeTail, bound: 0.1, read: data, wantCalls: 2},
		{name: "JSON data, many calls", head: `[{"Endpoint": "userpresence.xboxlive.com", "Calls": [`, unit: jsonCall, sep: ",", n: 4 * mib / len(jsonCall), tail: `]}]`,
			bound: 0.4, read: data, wantN: 1},
		{name: "JSON data, one huge string", head: jsonHugeHead, unit: strings.Repeat("x", 4096), n: 32 * mib / 4096, tail: jsonHugeTail, bound: 0.1, read: data, wantCalls: 2},
	}
}

// write writes the trace to w.
func (k *traceKind) write(w io.Writer) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(k.head)
	for i := range k.n {
		if i > 0 {
			bw.WriteString(k.sep)
		}
		bw.WriteString(k.unit)
	}
	bw.WriteString(k.tail)
	return bw.Flush()
}

// writeSAZ writes a .saz of k.n sessions to w, each a call and its answer
// as Fiddler saves them (one request in ten deflated, the rest stored:
// deflating each small file is what takes the time).
func (k *traceKind) writeSAZ(w io.Writer) error {
	z := zip.NewWriter(w)
	for i := range k.n {
		for _, f := range []struct{ name, text string }{
			{"raw/%d_c.txt", "GET https://profile.xboxlive.com/users/xuid(%d)/profile/settings?settings=Gamertag HTTP/1.1\r\nHost: profile.xboxlive.com\r\n" +
				"Authorization: XBL3.0 x=7;REDACTED\r\nx-xbl-contract-version: 2\r\nAccept: application/json\r\nUser-Agent: XboxServicesAPI/2021.04 c\r\n\r\n"},
			{"raw/%d_s.txt", "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 75\r\n\r\n" + // the body with its 16-digit XUID
				`{"profileUsers":[{"id":"%d","settings":[{"id":"Gamertag"}]}]}`},
			{"raw/%d_m.xml", timers(t0.Add(time.Duration(i) * time.Millisecond).Format(time.RFC3339Nano))},
		} {
			method := zip.Store
			if f.name == "raw/%d_c.txt" && i%10 == 0 {
				method = zip.Deflate
			}
			fw, err := z.CreateHeader(&zip.FileHeader{Name: fmt.Sprintf(f.name, i), Method: method})
			if err != nil {
				return err
			}
			if strings.Contains(f.text, "%d") {
				fmt.Fprintf(fw, f.text, 2533274790000000+i)
			} else {
				io.WriteString(fw, f.text)
			}
		}
	}
	return z.Close()
}

// heapSampler is a file that, each time another `every` bytes of it have
// been read, collects garbage and notes the heap in use: the most the
// reading holds at a point of its input, measured the same on every run.
type heapSampler struct {
	*os.File
	read, next, every int64
	base, peak        uint64
}

func newHeapSampler(f *os.File, every int64) *heapSampler {
	s := &heapSampler{File: f, every: every, next: every}
	s.base = liveHeap()
	return s
}

// liveHeap is the heap in use after a collection (two: what sync.Pools
// hold goes on the second).
func liveHeap() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func (s *heapSampler) count(n int) {
	if s.read += int64(n); s.read >= s.next {
		s.next += s.every
		s.sample()
	}
}

func (s *heapSampler) sample() { s.peak = max(s.peak, liveHeap()) }

func (s *heapSampler) Read(p []byte) (int, error) {
	n, err := s.File.Read(p)
	s.count(n)
	return n, err
}

func (s *heapSampler) ReadAt(p []byte, off int64) (int, error) {
	n, err := s.File.ReadAt(p, off)
	s.count(n)
	return n, err
}

// TestReadMemoryBounded: the heap reading and analyzing a trace holds per
// input byte, for every kind of input: many entries, and one huge string
// (a body, a field) of 32 MiB, which is read to its first 384 KiB instead
// of whole. The heap is sampled after a collection at each MiB of input
// read and once the report is made; RELIABILITY.md states the bounds
// (standard input: cmd/xblcall's TestAnalyzeStdinMemory).
func TestReadMemoryBounded(t *testing.T) {
	racebuild.Skip(t, "heap figures")
	loadAPIMap() // made once per process, not per trace
	for _, k := range traceKinds() {
		t.Run(k.name, func(t *testing.T) {
			name := filepath.Join(t.TempDir(), "trace")
			f, err := os.Create(name)
			if err != nil {
				t.Fatal(err)
			}
			if k.saz {
				err = k.writeSAZ(f)
			} else {
				err = k.write(f)
			}
			st, _ := f.Stat()
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			f, err = os.Open(name)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			a, _ := New(nil, nil)
			s := newHeapSampler(f, mib)
			in, err := k.read(s, st.Size(), a.Add)
			a.AddInput(in)
			rep := a.Report()
			s.sample()
			perByte := float64(s.peak-min(s.peak, s.base)) / float64(st.Size())
			t.Logf("%.1f MiB, %d calls: %.4f bytes of heap per input byte, at most %.2f MiB", float64(st.Size())/mib, in.Calls, perByte, float64(s.peak-min(s.peak, s.base))/mib)
			if want := max(k.wantCalls, k.n*k.wantN); err != nil || in.Calls != want || !in.Complete() || rep.Calls != want {
				t.Fatalf("%v: %d calls, %+v; want %d, read whole", err, in.Calls, in.Stop, want)
			}
			if perByte > k.bound {
				t.Errorf("%.4f bytes of heap per input byte; RELIABILITY.md states at most %.2f", perByte, k.bound)
			}
			runtime.KeepAlive(rep)
		})
	}
}
