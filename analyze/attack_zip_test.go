package analyze

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"strings"
	"testing"
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

// TestAttackSAZOverlappingFiles: a .saz whose directory entries (57 bytes
// each) all open the same 1 MiB file. Each is read (checked, and its
// request parsed) whole: 300 entries make a 1.02 MiB archive read 300
// times over, and the work grows as entries times file size (quadratic in
// the archive's size up to the 1 MiB a file is read to, then 18,000 times
// the archive). Deflated, the same shape inflates 1 GiB from 178 KB
// (1,000 entries, about 0.3 s here): decompressed size is bounded per
// file, not per archive. The test counts the bytes read from the archive.
func TestAttackSAZOverlappingFiles(t *testing.T) {
	b := overlappingSAZ(300, false)
	r := &countingReaderAt{r: bytes.NewReader(b)}
	calls := 0
	in, err := ReadSAZ(r, int64(len(b)), func(*Call) { calls++ })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d bytes of archive, %d bytes read, %d calls, read whole %v", len(b), r.n, calls, in.Complete())
	if ratio := float64(r.n) / float64(len(b)); ratio > 4 && in.Complete() {
		t.Errorf("each byte of the archive read %.0f times, and the trace read whole; want overlapping files refused, or a bound on the bytes read per archive byte", ratio)
	}
}
