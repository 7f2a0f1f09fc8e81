package analyze

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/xblgo/fgrl/internal/racebuild"
)

// manyUsersHAR is a HAR of n calls, each by another user (one group each:
// the report's worst case per call), one every 10 ms over span.
func manyUsersHAR(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"log":{"entries":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"startedDateTime":%q,"request":{"method":"GET","url":"https://profile.xboxlive.com/users/me/profile/settings",`+
			`"headers":[{"name":"Authorization","value":"XBL3.0 x=%d;t"}]},"response":{"status":200}}`,
			t0.Add(time.Duration(i)*10*time.Millisecond).Format(time.RFC3339Nano), 1000000+i)
	}
	b.WriteString(`]}}`)
	return b.Bytes()
}

// heap returns the heap in use after a GC, and the bytes allocated so far.
func heap() (inUse, allocated int64) {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc), int64(ms.TotalAlloc)
}

// TestMemoryBounds: the heap the analysis keeps per call and per input
// byte, for calls each by another user (a group per call: the most a call
// costs), and what it allocates on the way. RELIABILITY.md states these
// bounds.
func TestMemoryBounds(t *testing.T) {
	const n = 20_000
	har := manyUsersHAR(n)
	loadAPIMap() // made once per process, not per trace
	h0, a0 := heap()
	a, _ := New(nil, nil)
	if _, err := ReadHAR(bytes.NewReader(har), a.Add); err != nil {
		t.Fatal(err)
	}
	h1, a1 := heap()
	rep := a.Report()
	h2, a2 := heap()
	if len(rep.Groups) != n {
		t.Fatalf("%d groups", len(rep.Groups))
	}
	readKept, readAlloc, repKept, repAlloc := (h1-h0)/n, float64(a1-a0)/float64(len(har)), (h2-h1)/n, (a2-a1)/n
	t.Logf("%d calls of %d bytes: reading keeps %d bytes a call (%.2f per input byte) and allocates %.2f per input byte; "+
		"the report keeps %d bytes a call and allocates %d", n, len(har)/n, readKept, float64(h1-h0)/float64(len(har)),
		readAlloc, repKept, repAlloc)
	if readKept > 350 || repKept > 360 || readAlloc > 5 || repAlloc > 1000 {
		t.Errorf("over the bounds RELIABILITY.md states: reading keeps at most 350 bytes a call and allocates at most " +
			"5 per input byte; the report keeps at most 360 bytes a call and allocates at most 1000")
	}
	runtime.KeepAlive(har)
	runtime.KeepAlive(a)
	runtime.KeepAlive(rep)
}

// endless is a HAR whose entries never end.
type endless struct {
	head  string
	entry string
	i     int
	buf   []byte
}

func (e *endless) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(e.buf) == 0 {
			if e.i == 0 {
				e.buf = []byte(e.head)
			} else {
				e.buf = []byte(e.entry)
			}
			e.i++
		}
		c := copy(p[n:], e.buf)
		e.buf, n = e.buf[c:], n+c
	}
	return n, nil
}

// TestReadTooLarge: an endless trace stops at the byte limit with the calls
// read until then; one whose entries never start is no trace.
func TestReadTooLarge(t *testing.T) {
	defer func(old int64) { maxTraceBytes = old }(maxTraceBytes)
	maxTraceBytes = 1 << 20
	entry := `{"startedDateTime":"2026-03-01T20:00:00Z","request":{"method":"GET","url":"https://a/"},"response":{"status":200}},`
	calls := 0
	in, err := ReadHAR(&endless{head: `{"log":{"entries":[`, entry: entry}, func(*Call) { calls++ })
	if err != nil || !strings.Contains(in.Truncated, "stopped after 1 MiB") || calls < (1<<20)/len(entry)-1 {
		t.Errorf("endless entries: %v, %d calls, truncated %q", err, calls, in.Truncated)
	}
	_, err = ReadHAR(&endless{head: `{"log":{"x":[`, entry: `1,`}, func(*Call) {})
	if err == nil || !strings.Contains(err.Error(), "no entries within its first 1 MiB") {
		t.Errorf("endless other value: %v", err)
	}
	_, err = ReadHAR(io.MultiReader(strings.NewReader(`{"log":{"entries":[{"request":{"url":"`), &endless{head: "a", entry: "a"}), func(*Call) {})
	if err != nil {
		t.Errorf("an endless string: %v", err)
	}
}

// TestLongGroupsKeepLittleRoom: what the analysis keeps of a long trace is
// its calls with little room unused. 1,000 users making 300 calls each
// (the shape of a what-if's trace: few groups, many calls each) kept 57
// bytes a call while a group's calls were one slice grown by append (512
// places for 300 calls); in chunks of recChunk, 35.5; with the filled
// chunks encoded (encodeRecs), 16.7.
func TestLongGroupsKeepLittleRoom(t *testing.T) {
	racebuild.Skip(t, "heap figures over 300,000 calls")
	const users, each = 1000, 300
	auths := make([]string, users)
	for u := range auths {
		auths[u] = "XBL3.0 x=" + strconv.Itoa(u) + ";R"
	}
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	loadAPIMap()
	h0, _ := heap()
	a, _ := New(nil, nil)
	for i := range users * each {
		c := Call{Index: i, Time: t0.Add(time.Duration(i) * time.Millisecond), Method: "GET",
			URL: "https://profile.xboxlive.com/users/me/profile/settings", Authorization: auths[i%users], Status: 200}
		a.Add(&c)
	}
	h1, _ := heap()
	kept := float64(h1-h0) / (users * each)
	t.Logf("%d calls by %d users: %.1f bytes kept a call", users*each, users, kept)
	if kept > 20 {
		t.Errorf("%.1f bytes kept a call, want at most 20 (filled chunks encoded, the open one's room)", kept)
	}
	if rep := a.Report(); rep.Judged != users*each {
		t.Errorf("%d calls judged, want %d", rep.Judged, users*each)
	}
	runtime.KeepAlive(a)
}

// TestGroupStaysSmall: a trace of a user per call has a group per call, so
// a group's size is most of what such a trace costs a call
// (TestMemoryWorstShapes). When a group kept its filled chunks itself it
// was 120 bytes, in the 128-byte size class, and the shortest HAR
// entries, a user each, cost 4.00 bytes of heap per input byte with the
// report, over RELIABILITY.md's bound of 4; now 96 and 3.72.
func TestGroupStaysSmall(t *testing.T) {
	if n := unsafe.Sizeof(group{}); n > 96 {
		t.Errorf("a group is %d bytes, want at most 96", n)
	}
}
