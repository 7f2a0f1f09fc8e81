package analyze

import (
	"archive/zip"
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestAttackMemoryPerInputByte: input shapes the memory tests do not
// cover, each read and analyzed from memory, the heap held after reading
// (and after the report) per input byte, against the bound RELIABILITY.md
// states for its kind (its round-4 analyzer section).
//
//   - .saz: each session's request deflated (1 MiB of URL in about 1 KB),
//     each by another user: a group's host is a substring of the call's
//     URL, so each group holds its whole URL (1 MiB): 600 bytes of heap
//     per input byte against 0.6.
//   - HAR: the same with 380 KiB URLs (the cutter's cut is 384 KiB), a user
//     per entry: 1 per input byte against 0.4.
//   - CSV: the shortest rows that are judged calls, a user each: 7.5 per
//     input byte after reading (14 after the report) against 0.4 (the
//     table's figure holds for 333-byte rows of one user only).
//   - HAR: in-game event uploads, one 45-byte event line each (a 32-byte
//     record): 0.8 per input byte against 0.4.
func TestAttackMemoryPerInputByte(t *testing.T) {
	tests := []struct {
		name  string
		input func() []byte
		read  func(b []byte, add func(*Call)) (Input, error)
		bound float64
	}{
		{".saz, a deflated 1 MiB URL per session, a user each", func() []byte { return longURLSAZ(t, 32) }, readSAZBytes, 0.6},
		{"HAR, a 380 KiB URL per entry, a user each", func() []byte { return longURLHAR(32) }, readHARBytes, 0.4},
		{"CSV, short rows, a user each", shortRowsCSV, readDataBytes, 0.4},
		{"HAR, in-game event uploads", eventsHAR, readHARBytes, 0.4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.input()
			h0 := liveHeap()
			a, _ := New(nil, nil)
			in, err := tt.read(b, a.Add)
			if err != nil || !in.Complete() {
				t.Fatalf("%v, %+v", err, in)
			}
			a.AddInput(in)
			h1 := liveHeap()
			rep := a.Report()
			h2 := liveHeap()
			read, reported := float64(int64(h1)-int64(h0))/float64(len(b)), float64(int64(h2)-int64(h0))/float64(len(b))
			t.Logf("%d bytes, %d calls: %.2f bytes of heap per input byte read, %.2f with the report", len(b), in.Calls, read, reported)
			if max(read, reported) > tt.bound {
				t.Errorf("%.2f bytes of heap per input byte; RELIABILITY.md states at most %.2f", max(read, reported), tt.bound)
			}
			runtime.KeepAlive(a)
			runtime.KeepAlive(rep)
			runtime.KeepAlive(b)
		})
	}
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
