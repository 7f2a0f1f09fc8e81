package analyze

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// saz builds a Fiddler archive from name → content.
func saz(t testing.TB, files map[string]string) *bytes.Reader {
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	for name, content := range files {
		w, err := z.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(content))
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return bytes.NewReader(buf.Bytes())
}

func timers(begin string) string {
	return `<?xml version="1.0" encoding="utf-8"?><Session SID="1"><SessionTimers ClientConnected="` + begin +
		`" ClientBeginRequest="` + begin + `" ClientDoneResponse="2026-03-01T20:00:01.25+00:00"/><SessionFlags/></Session>`
}

// TestReadSAZ: sessions in order, the request as sent through a proxy
// (absolute URL) or directly (Host header), the answer's status,
// Retry-After and body, CONNECT tunnels passed over, and a session without
// timers skipped with its reason.
func TestReadSAZ(t *testing.T) {
	r := saz(t, map[string]string{
		"[Content_Types].xml": "<Types/>",
		"raw/1_c.txt":         "CONNECT profile.xboxlive.com:443 HTTP/1.1\r\nHost: profile.xboxlive.com:443\r\n\r\n",
		"raw/1_m.xml":         timers("2026-03-01T20:00:00+00:00"),
		"raw/2_c.txt": "POST https://profile.xboxlive.com/users/batch/profile/settings HTTP/1.1\r\nHost: profile.xboxlive.com\r\n" +
			"Authorization: XBL3.0 x=7;secret\r\nContent-Length: 17\r\n\r\n{\"userIds\":[\"1\"]}",
		"raw/2_s.txt":  "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 9\r\nContent-Length: 2\r\n\r\n{}",
		"raw/2_m.xml":  timers("2026-03-01T20:00:01.0000000+00:00"),
		"raw/10_c.txt": "GET /users/me/people HTTP/1.1\r\nHost: social.xboxlive.com\r\nAuthorization: XBL3.0 x=7;secret\r\n\r\n",
		"raw/10_s.txt": "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
		"raw/10_m.xml": timers("2026-03-01T20:00:02+00:00"),
		"raw/11_c.txt": "GET /x HTTP/1.1\r\nHost: social.xboxlive.com\r\n\r\n",
	})
	var got []Call
	in, err := ReadSAZ(r, r.Size(), func(c *Call) { got = append(got, *c) })
	if err != nil {
		t.Fatal(err)
	}
	want := []Call{
		{Index: 1, Time: at(1), Duration: 250 * time.Millisecond, Method: "POST", URL: "https://profile.xboxlive.com/users/batch/profile/settings",
			Authorization: "XBL3.0 x=7;REDACTED", Status: 429, RetryAfter: "9", RequestBody: []byte(`{"userIds":["1"]}`), ResponseBody: []byte(`{}`)},
		{Index: 2, Time: at(2), Method: "GET", URL: "https://social.xboxlive.com/users/me/people",
			Authorization: "XBL3.0 x=7;REDACTED", Status: 200},
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty(), cmpopts.IgnoreFields(Call{}, "Offset"), cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Problem{{3, 0, "session 11: no timers (N_m.xml)"}}, in.Problems, cmpopts.IgnoreFields(Problem{}, "Offset")); diff != "" || in.Calls != 2 {
		t.Errorf("%d calls; problems (-want +got):\n%s", in.Calls, diff)
	}
	if _, err := ReadSAZ(strings.NewReader("PK"), 2, func(*Call) {}); !errors.Is(err, ErrNotTrace) {
		t.Errorf("a broken zip: %v", err)
	}
	empty := saz(t, map[string]string{"readme.txt": "x"})
	if _, err := ReadSAZ(empty, empty.Size(), func(*Call) {}); err == nil || !strings.Contains(err.Error(), "no raw/N_c.txt") {
		t.Errorf("a zip without sessions: %v", err)
	}
}

func FuzzReadSAZ(f *testing.F) {
	f.Add("POST https://profile.xboxlive.com/users/batch/profile/settings HTTP/1.1\r\nHost: p\r\nAuthorization: XBL3.0 x=1;t\r\n\r\n{}",
		"HTTP/1.1 429 X\r\nRetry-After: 1\r\n\r\n", timers("2026-03-01T20:00:00Z"), timers("2026-03-01T20:00:01Z"))
	f.Add("GET / HTTP/1.0\r\n\r\n", "garbage", "<Session/>", "")
	f.Add("GET https://profile.xboxlive.com/users/me/profile/settings HTTP/1.1\r\nHost: p\r\nAuthorization: XBL3.0 x=1;t\r\n\r\n",
		"HTTP/1.1 200 OK\r\n\r\n", timers("1823-03-01T20:00:00Z"), timers("2117-03-01T20:00:00Z"))
	// Invalid UTF-8; and the request a .saz of its own, whole and cut short.
	f.Add("GET https://a/\xff HTTP/1.1\r\nHost: p\r\nUser-Agent: \xc3\r\n\r\n", "HTTP/1.1 429 \xff\r\nRetry-After: 1\r\n\r\n\xed\xa0\x80", timers("2026-03-01T20:00:00Z"), "")
	whole := saz(f, map[string]string{"raw/1_c.txt": "GET https://a/ HTTP/1.1\r\nHost: a\r\n\r\n", "raw/1_m.xml": timers("2026-03-01T20:00:00Z")})
	b := make([]byte, whole.Size())
	whole.ReadAt(b, 0)
	f.Add(string(b), "", "", "")
	f.Add(string(b[:len(b)-10]), "", "", "")
	// Directories not what their end records say, sessions named two ways
	// or twice, and zip64.
	red := redSAZ(f)
	f.Add(string(asZip64(red)), "", "", "")
	end := bytes.LastIndex(red, []byte("PK\x05\x06"))
	binary.LittleEndian.PutUint16(red[end+10:], 3)
	f.Add(string(red), "", "", "")
	f.Add(string(stored(f, append(append(sazFiles("2", sazPut, saz429, 1), sazFiles("02", sazPut, saz429, 2)...), [2]string{"raw/+2_s.txt", ""}))), "", "", "")
	f.Fuzz(func(t *testing.T, c, s, m, m2 string) {
		// Two sessions, the same request and answer at two times.
		r := saz(t, map[string]string{"raw/1_c.txt": c, "raw/1_s.txt": s, "raw/1_m.xml": m,
			"raw/2_c.txt": c, "raw/2_s.txt": s, "raw/2_m.xml": m2})
		a, _ := New(nil, nil)
		in, err := ReadSAZ(r, r.Size(), a.Add)
		if err != nil || in.Calls+in.ProblemCount > 2 {
			t.Fatalf("%v %+v", err, in)
		}
		a.AddInput(in)
		checkGap(t, in, r.Size(), report(t, a))
		// c read as a .saz: each session takes a 46-byte directory record
		// at least; a directory that cannot be read is no trace.
		in, err = ReadSAZ(strings.NewReader(c), int64(len(c)), func(*Call) {})
		if err != nil && !errors.Is(err, ErrNotTrace) || err == nil && in.Calls+in.ProblemCount > len(c)/46 {
			t.Fatalf("%v %+v from %d bytes", err, in, len(c))
		}
	})
}

// stored writes a zip of files (stored) in order and returns it.
func stored(t testing.TB, files [][2]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	for _, f := range files {
		w, err := z.CreateHeader(&zip.FileHeader{Name: f[0], Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(f[1]))
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// sazFiles is session name's three files: the request, answer and
// timers at second s.
func sazFiles(name, req, resp string, s int) [][2]string {
	return [][2]string{{"raw/" + name + "_c.txt", req}, {"raw/" + name + "_s.txt", resp},
		{"raw/" + name + "_m.xml", timers(at(float64(s)).Format(time.RFC3339))}}
}

// redSAZ is three sessions: a call that passes, then two 429s in a row.
func redSAZ(t testing.TB) []byte {
	return stored(t, append(append(sazFiles("1", sazGet, saz200, 0), sazFiles("2", sazPut, saz429, 1)...), sazFiles("3", sazPut, saz429, 2)...))
}

// headersSize is the bytes of the first n file headers of the directory
// dir starts.
func headersSize(dir []byte, n int) int {
	le := binary.LittleEndian
	size := 0
	for range n {
		size += 46 + int(le.Uint16(dir[size+28:])) + int(le.Uint16(dir[size+30:])) + int(le.Uint16(dir[size+32:]))
	}
	return size
}

// asZip64 rewrites the zip b with a zip64 end record (and its locator)
// that gives the directory, its end record's fields left at 0xFFFF and
// 0xFFFFFFFF, as writers of large archives leave them.
func asZip64(b []byte) []byte {
	le := binary.LittleEndian
	end := bytes.LastIndex(b, []byte("PK\x05\x06"))
	files, size, off := le.Uint16(b[end+10:]), le.Uint32(b[end+12:]), le.Uint32(b[end+16:])
	out := append([]byte(nil), b[:end]...)
	rec := make([]byte, 56)
	le.PutUint32(rec, 0x06064b50)
	le.PutUint64(rec[4:], 44)
	le.PutUint64(rec[24:], uint64(files))
	le.PutUint64(rec[32:], uint64(files))
	le.PutUint64(rec[40:], uint64(size))
	le.PutUint64(rec[48:], uint64(off))
	loc := make([]byte, 20)
	le.PutUint32(loc, 0x07064b50)
	le.PutUint64(loc[8:], uint64(len(out)))
	le.PutUint32(loc[16:], 1)
	out = append(append(out, rec...), loc...)
	eocd := append([]byte(nil), b[end:]...)
	le.PutUint16(eocd[8:], 0xFFFF)
	le.PutUint16(eocd[10:], 0xFFFF)
	le.PutUint32(eocd[12:], 0xFFFFFFFF)
	le.PutUint32(eocd[16:], 0xFFFFFFFF)
	return append(out, eocd...)
}

// TestSAZDirectoryAccountedFor: the zip's directory is read by the count of
// files its end record gives, and must take the bytes the end record says,
// up to the end record (or zip64 end record) itself: an end record whose
// size, count, or both, leave a session's headers out (archive/zip, which
// reads by the count, and so Fiddler's zip library, list them) is no
// trace. Before, ReadSAZ read as far as the size said and passed the two
// 429s of the sessions left out over unsaid: green.
func TestSAZDirectoryAccountedFor(t *testing.T) {
	le := binary.LittleEndian
	tests := []struct {
		name  string
		edit  func(b []byte) []byte
		calls int // read whole; 0: no trace
	}{
		{"as written", func(b []byte) []byte { return b }, 3},
		{"zip64", asZip64, 3},
		{"the size covers the first session", func(b []byte) []byte {
			end := bytes.LastIndex(b, []byte("PK\x05\x06"))
			le.PutUint32(b[end+12:], uint32(headersSize(b[le.Uint32(b[end+16:]):end], 3)))
			return b
		}, 0},
		{"the count covers the first session", func(b []byte) []byte {
			end := bytes.LastIndex(b, []byte("PK\x05\x06"))
			le.PutUint16(b[end+8:], 3)
			le.PutUint16(b[end+10:], 3)
			return b
		}, 0},
		{"the size and count cover the first session", func(b []byte) []byte {
			end := bytes.LastIndex(b, []byte("PK\x05\x06"))
			le.PutUint16(b[end+8:], 3)
			le.PutUint16(b[end+10:], 3)
			le.PutUint32(b[end+12:], uint32(headersSize(b[le.Uint32(b[end+16:]):end], 3)))
			return b
		}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.edit(redSAZ(t))
			if zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b))); tt.calls > 0 && (err != nil || len(zr.File) != 9) {
				t.Fatalf("archive/zip: %v", err)
			}
			verdict, in := verdictOf(t, func(add func(*Call)) (Input, error) { return ReadSAZ(bytes.NewReader(b), int64(len(b)), add) })
			switch {
			case tt.calls > 0 && (verdict != Red || in.Calls != tt.calls || !in.Complete()):
				t.Errorf("verdict %s, %+v; want red, %d calls read whole", verdict, in, tt.calls)
			case tt.calls == 0 && !strings.HasPrefix(verdict, "error: not a trace: SAZ: zip: not a valid zip file: the directory"):
				t.Errorf("verdict %s, %+v; want no trace: the directory not what its end record says", verdict, in)
			}
		})
	}
}

// TestSAZSessionFilesOnce: a session's files are named once, one way: two
// sessions whose numbers read the same ("2" and "02", or "+2", which
// strconv.Atoi reads as 2) or a file listed twice are no session, each
// named in the problems (the trace incomplete); a number that is not
// decimal digits names no session. Numbers padded with zeros, as Fiddler
// pads them to the width of the largest, read as written. Before, "2" and
// "02" (or "+2") became one session, one of two 429s read and the other
// passed over unsaid; a file listed twice won silently.
func TestSAZSessionFilesOnce(t *testing.T) {
	first := sazFiles("1", sazGet, saz200, 0)
	tests := []struct {
		name   string
		files  [][2]string
		calls  int
		reason string // of the first problem; "" for none
	}{
		{"padded", append(append(sazFiles("01", sazGet, saz200, 0), sazFiles("02", sazPut, saz429, 1)...), sazFiles("10", sazPut, saz200, 30)...), 3, ""},
		{"2 and 02", append(append(first, sazFiles("2", sazPut, saz429, 1)...), sazFiles("02", sazPut, saz429, 2)...), 1, "session 2: files named 2_ and 02_"},
		{"2 and +2", append(append(first, sazFiles("2", sazPut, saz429, 1)...), sazFiles("+2", sazPut, saz429, 2)...), 2, "raw/+2_c.txt: its number is not decimal digits"},
		{"a file listed twice", append(append(first, sazFiles("2", sazPut, saz429, 1)...), [2]string{"raw/2_s.txt", saz200}), 1, "session 2: raw/2_s.txt listed twice"},
		{"in another case", append(append(first, sazFiles("2", sazPut, saz429, 1)...), [2]string{"RAW/2_S.TXT", saz200}), 1, "session 2: raw/2_s.txt listed twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := stored(t, tt.files)
			verdict, in := verdictOf(t, func(add func(*Call)) (Input, error) { return ReadSAZ(bytes.NewReader(b), int64(len(b)), add) })
			if in.Calls != tt.calls || tt.reason == "" && (!in.Complete() || verdict == Incomplete) ||
				tt.reason != "" && (verdict != Incomplete || len(in.Problems) == 0 || !strings.HasPrefix(in.Problems[0].Reason, tt.reason)) {
				t.Errorf("verdict %s, %d calls, problems %v; want %d calls, the first problem %q", verdict, in.Calls, in.Problems, tt.calls, tt.reason)
			}
		})
	}
}
