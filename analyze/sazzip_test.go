package analyze

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"strings"
	"testing"
	"time"
)

// countingReaderAt counts the bytes read through it.
type countingReaderAt struct {
	r *bytes.Reader
	n int64
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n += int64(n)
	return n, err
}

// overlappingSAZ is a zip of one session's three files (the request 1 MiB
// long) and a directory of n sessions whose files are those same three:
// each directory entry is 57 bytes and opens the 1 MiB request again.
// Neither archive/zip nor this reader checks that files do not overlap.
func overlappingSAZ(n int, deflate bool) []byte {
	le := binary.LittleEndian
	var out bytes.Buffer
	type local struct {
		off, crc, csize, usize uint32
		method                 uint16
	}
	add := func(name, content string, deflated bool) local {
		data, method := []byte(content), uint16(0)
		if deflated {
			var b bytes.Buffer
			w, _ := flate.NewWriter(&b, flate.BestCompression)
			w.Write(data)
			w.Close()
			data, method = b.Bytes(), 8
		}
		f := local{uint32(out.Len()), crc32.ChecksumIEEE([]byte(content)), uint32(len(data)), uint32(len(content)), method}
		var h [30]byte
		le.PutUint32(h[0:], 0x04034b50)
		le.PutUint16(h[4:], 20)
		le.PutUint16(h[8:], method)
		le.PutUint32(h[14:], f.crc)
		le.PutUint32(h[18:], f.csize)
		le.PutUint32(h[22:], f.usize)
		le.PutUint16(h[26:], uint16(len(name)))
		out.Write(h[:])
		out.WriteString(name)
		out.Write(data)
		return f
	}
	body := strings.Repeat("a", 1<<20-200)
	c := add("raw/0_c.txt", fmt.Sprintf("POST https://a.example/ HTTP/1.1\r\nHost: a.example\r\nContent-Length: %d\r\n\r\n%s", len(body), body), deflate)
	s := add("raw/0_s.txt", saz200, false)
	m := add("raw/0_m.xml", timers("2026-03-01T20:00:00Z"), false)
	dirOff := out.Len()
	for i := range n {
		for _, k := range []struct {
			f    local
			kind string
		}{{c, "c.txt"}, {s, "s.txt"}, {m, "m.xml"}} {
			name := fmt.Sprintf("raw/%d_%s", i, k.kind)
			var h [46]byte
			le.PutUint32(h[0:], 0x02014b50)
			le.PutUint16(h[6:], 20)
			le.PutUint16(h[10:], k.f.method)
			le.PutUint32(h[16:], k.f.crc)
			le.PutUint32(h[20:], k.f.csize)
			le.PutUint32(h[24:], k.f.usize)
			le.PutUint16(h[28:], uint16(len(name)))
			le.PutUint32(h[42:], k.f.off)
			out.Write(h[:])
			out.WriteString(name)
		}
	}
	var end [22]byte
	le.PutUint32(end[0:], 0x06054b50)
	le.PutUint16(end[8:], uint16(3*n))
	le.PutUint16(end[10:], uint16(3*n))
	le.PutUint32(end[12:], uint32(out.Len()-dirOff))
	le.PutUint32(end[16:], uint32(dirOff))
	out.Write(end[:])
	return out.Bytes()
}

// TestSAZFilesNeverOverlap: a .saz whose directory entries (57 bytes
// each) all open the same 1 MiB file, stored or deflated. Every file read
// must end before the next one read starts: all but one of the sessions
// sharing the file are problems (the trace incomplete), and each byte of
// the archive is read about once. Before, each entry read the file whole:
// 300 entries made a 1.02 MiB archive read 286 times over, and 1,000
// deflated ones inflated 1 GiB from 178 KB.
func TestSAZFilesNeverOverlap(t *testing.T) {
	for _, tt := range []struct {
		name     string
		sessions int
		deflate  bool
	}{{"stored", 300, false}, {"deflated", 1000, true}} {
		t.Run(tt.name, func(t *testing.T) {
			b := overlappingSAZ(tt.sessions, tt.deflate)
			r := &countingReaderAt{r: bytes.NewReader(b)}
			calls := 0
			in, err := ReadSAZ(r, int64(len(b)), func(*Call) { calls++ })
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d bytes of archive, %d bytes read, %d calls, %d problems", len(b), r.n, calls, in.ProblemCount)
			if gap := in.Gap(); calls != 1 || in.ProblemCount != tt.sessions-1 || gap == nil || !strings.Contains(gap.Reason, "overlaps another file") {
				t.Errorf("%d calls, %d problems (the first %v); want 1 call and the other sessions overlapping", calls, in.ProblemCount, gap)
			}
			if r.n > 2*int64(len(b)) {
				t.Errorf("%d bytes read of a %d-byte archive; want each read about once", r.n, len(b))
			}
		})
	}
}

// TestSAZInflateBounded: sessions whose requests each inflate to the 1 MiB
// read of a file from about 1 KB: what the files read inflate to is bounded
// per archive (256 MiB and 64 bytes per byte of it), and reading stops
// there, the trace incomplete. Before, only each file was bounded: 1,000
// such sessions inflated 1 GiB from about 1.2 MB.
func TestSAZInflateBounded(t *testing.T) {
	body := strings.Repeat("a", 1<<20)
	req := fmt.Sprintf("POST https://a.xboxlive.com/ HTTP/1.1\r\nHost: a.xboxlive.com\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	var deflated bytes.Buffer
	fw, _ := flate.NewWriter(&deflated, flate.BestCompression)
	io.WriteString(fw, req)
	fw.Close()
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	const n = 300
	for i := range n {
		w, err := z.CreateRaw(&zip.FileHeader{Name: fmt.Sprintf("raw/%d_c.txt", i), Method: zip.Deflate, CRC32: crc32.ChecksumIEEE([]byte(req)),
			CompressedSize64: uint64(deflated.Len()), UncompressedSize64: uint64(len(req))})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(deflated.Bytes())
		for _, f := range [][2]string{{"raw/%d_s.txt", saz200}, {"raw/%d_m.xml", timers(at(float64(i)).Format(time.RFC3339))}} {
			w, _ := z.CreateHeader(&zip.FileHeader{Name: fmt.Sprintf(f[0], i), Method: zip.Store})
			io.WriteString(w, f[1])
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	in, err := ReadSAZ(bytes.NewReader(b), int64(len(b)), func(*Call) {})
	budget := inflateBudget(int64(len(b)))
	if err != nil || in.Stop == nil || !strings.Contains(in.Stop.Reason, "inflate past") || int64(in.Calls)<<20 > budget || int64(in.Calls+2)<<20 < budget {
		t.Errorf("%v: %d calls of %d, stop %v; want a stop after about %d MiB", err, in.Calls, n, in.Stop, budget>>20)
	}
}
