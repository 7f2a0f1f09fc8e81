package analyze

import (
	"archive/zip"
	"bytes"
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
