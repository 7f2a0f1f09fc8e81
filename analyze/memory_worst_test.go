package analyze

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/racebuild"
)

// TestMemoryWorstShapes: for each kind of input, the heap reading (and then
// reporting) holds per input byte on the shapes where a call costs the
// most for the fewest bytes: a user per call (a group of its own, the
// report's worst case per call: TestMemoryBounds) from the shortest entry
// that is a judged call, the longest URLs, and in-game events read from
// uploads. RELIABILITY.md states these bounds. Before, a group kept its
// host as a part of the call's URL (the whole URL: 604 bytes per byte of a
// .saz whose 1 MiB URLs deflate to 1 KB, 1.01 of a HAR of 380 KiB URLs),
// and an event 32 bytes (0.81 per byte).
func TestMemoryWorstShapes(t *testing.T) {
	racebuild.Skip(t, "heap figures")
	tests := []struct {
		name  string
		input func() []byte
		read  func(b []byte, add func(*Call)) (Input, error)
		bound float64
	}{
		{"HAR, the shortest entries, a user each", shortestHAR, readHARBytes, 4},
		{"HAR, a 380 KiB URL per entry, a user each", func() []byte { return longURLHAR(32) }, readHARBytes, 0.01},
		{"HAR, in-game event uploads", eventsHAR, readHARBytes, 0.4},
		{".saz, the shortest sessions, a user each", func() []byte { return shortestSAZ(t) }, readSAZBytes, 2},
		// 32 sessions of 1.7 KB: the analysis's fixed cost is most of it.
		{".saz, a deflated 1 MiB URL per session, a user each", func() []byte { return longURLSAZ(t, 32) }, readSAZBytes, 1.5},
		{"CSV data, the shortest rows, a user each", shortRowsCSV, readDataBytes, 13},
		{"JSON data, the shortest calls, a user each", shortestDataJSON, readDataBytes, 8},
	}
	loadAPIMap() // made once per process, not per trace
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.input()
			h0 := liveHeap()
			a, _ := New(nil, nil)
			in, err := tt.read(b, a.Add)
			if err != nil || !in.Complete() || in.Calls == 0 {
				t.Fatalf("%v, %+v", err, in)
			}
			a.AddInput(in)
			h1 := liveHeap()
			rep := a.Report()
			h2 := liveHeap()
			read, reported := float64(int64(h1)-int64(h0))/float64(len(b)), float64(int64(h2)-int64(h0))/float64(len(b))
			t.Logf("%d bytes, %d calls (%d bytes a call): %.2f bytes of heap per input byte read, %.2f with the report (%d and %d bytes a call)",
				len(b), in.Calls, len(b)/in.Calls, read, reported, (int64(h1)-int64(h0))/int64(in.Calls), (int64(h2)-int64(h0))/int64(in.Calls))
			if max(read, reported) > tt.bound {
				t.Errorf("%.2f bytes of heap per input byte; RELIABILITY.md states at most %.2f", max(read, reported), tt.bound)
			}
			runtime.KeepAlive(a)
			runtime.KeepAlive(rep)
			runtime.KeepAlive(b)
		})
	}
}

// shortestHAR is 4 MiB of the shortest HAR entries that are judged calls,
// each by another user.
func shortestHAR() []byte {
	var b bytes.Buffer
	b.WriteString(`{"log":{"entries":[`)
	for i := 0; b.Len() < 4<<20; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"startedDateTime":"2026-03-01T20:00:00Z","request":{"method":"GET","url":"http://a.xboxlive.com","headers":[{"name":"Authorization","value":"XBL3.0 x=%d;t"}]},"response":{"status":0}}`, i)
	}
	b.WriteString(`]}}`)
	return b.Bytes()
}

// shortestSAZ is a .saz of the shortest sessions that are judged calls (a
// request and its timers, stored; no answer), each by another user.
func shortestSAZ(t *testing.T) []byte {
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	for i := 0; buf.Len() < 2<<20; i++ {
		for _, f := range [][2]string{
			{"raw/%d_c.txt", fmt.Sprintf("GET http://a.xboxlive.com HTTP/1.1\r\nAuthorization: XBL3.0 x=%d;t\r\n\r\n", i)},
			{"raw/%d_m.xml", `<Session><SessionTimers ClientBeginRequest="2026-03-01T20:00:00Z"/></Session>`},
		} {
			w, err := z.CreateHeader(&zip.FileHeader{Name: fmt.Sprintf(f[0], i), Method: zip.Store})
			if err != nil {
				t.Fatal(err)
			}
			io.WriteString(w, f[1])
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// shortestDataJSON is 4 MiB of the shortest JSON data calls that are
// judged calls, each by another user.
func shortestDataJSON() []byte {
	var b bytes.Buffer
	b.WriteString(`[{"":"a.xboxlive.com","c":[`)
	for i := 0; b.Len() < 4<<20; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"uri":"/","xboxuserid":"%d","reqtimeutc":%s,"httpstatuscode":0}`, i, fileTimeJSON(t0))
	}
	b.WriteString(`]}]`)
	return b.Bytes()
}

func readSAZBytes(b []byte, add func(*Call)) (Input, error) {
	return ReadSAZ(bytes.NewReader(b), int64(len(b)), add)
}

func readHARBytes(b []byte, add func(*Call)) (Input, error) {
	return ReadHAR(bytes.NewReader(b), add)
}

func readDataBytes(b []byte, add func(*Call)) (Input, error) {
	return ReadData(bytes.NewReader(b), add)
}

// longURLSAZ is a .saz of n sessions, each a GET of a 1 MiB URL
// (deflated) by another user.
func longURLSAZ(t *testing.T, n int) []byte {
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	path := strings.Repeat("a", 1<<20-300)
	for i := range n {
		for _, f := range []struct {
			name, text string
			method     uint16
		}{
			{"raw/%d_c.txt", fmt.Sprintf("GET https://profile.xboxlive.com/%s HTTP/1.1\r\nHost: profile.xboxlive.com\r\nAuthorization: XBL3.0 x=%d;t\r\n\r\n", path, 1000+i), zip.Deflate},
			{"raw/%d_s.txt", saz200, zip.Store},
			{"raw/%d_m.xml", timers(t0.Add(time.Duration(i) * time.Second).Format(time.RFC3339Nano)), zip.Store},
		} {
			w, err := z.CreateHeader(&zip.FileHeader{Name: fmt.Sprintf(f.name, i), Method: f.method})
			if err != nil {
				t.Fatal(err)
			}
			w.Write([]byte(f.text))
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// longURLHAR is a HAR of n entries, each a GET of a 380 KiB URL by
// another user.
func longURLHAR(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"log":{"entries":[`)
	path := strings.Repeat("a", 380<<10)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"startedDateTime":%q,"request":{"method":"GET","url":"https://profile.xboxlive.com/%s",`+
			`"headers":[{"name":"Authorization","value":"XBL3.0 x=%d;t"}]},"response":{"status":200}}`,
			t0.Add(time.Duration(i)*time.Second).Format(time.RFC3339Nano), path, 1000000+i)
	}
	b.WriteString(`]}}`)
	return b.Bytes()
}

// shortRowsCSV is 4 MiB of the shortest CSV rows that are judged calls
// (12 fields), each by another user.
func shortRowsCSV() []byte {
	var b bytes.Buffer
	b.WriteString("v1510\n" + strings.Repeat("h,", 11) + "h\n")
	for i := 0; b.Len() < 4<<20; i++ {
		fmt.Fprintf(&b, "x.xboxlive.com,/,%d,,,,,,,,1/1/2026 1:00:00 AM,\n", i)
	}
	return b.Bytes()
}

// eventsHAR is a HAR of 64 uploads to data-vef.xboxlive.com, each 64 KiB
// of the shortest Common Schema 1.0 event lines.
func eventsHAR() []byte {
	line := `|ABCD_1A2B3C4D.|1/1/2026 1:00:00 AM|||||||||\n`
	body := strings.Repeat(line, (64<<10)/(len(line)-1))
	var b bytes.Buffer
	b.WriteString(`{"log":{"entries":[`)
	for i := range 64 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"startedDateTime":"2026-03-01T20:00:00Z","request":{"method":"POST","url":"https://data-vef.xboxlive.com/e",`+
			`"headers":[{"name":"Authorization","value":"XBL3.0 x=1;t"}],"postData":{"text":"%s"}},"response":{"status":200}}`, body)
	}
	b.WriteString(`]}}`)
	return b.Bytes()
}
