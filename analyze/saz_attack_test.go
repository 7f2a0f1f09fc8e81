package analyze_test

// A second outside attack on the trace analyzer: Fiddler archives (.saz)
// and the trace analyzer's data files whose red the analyzer does not
// judge red, though it reads them whole.

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/analyze"
)

// an2File is one file of an archive, in the order written.
type an2File struct{ name, content string }

// an2SAZ writes the files, stored, into a zip.
func an2SAZ(t *testing.T, files []an2File) []byte {
	t.Helper()
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	for _, f := range files {
		w, err := z.CreateHeader(&zip.FileHeader{Name: f.name, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, f.content)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func an2Timers(begin time.Time) string {
	b := begin.Format(time.RFC3339Nano)
	return `<?xml version="1.0" encoding="utf-8"?><Session SID="1"><SessionTimers ClientConnected="` + b +
		`" ClientBeginRequest="` + b + `" ClientDoneResponse="` + b + `"/><SessionFlags/></Session>`
}

func an2Request(auth ...string) string {
	s := "GET https://profile.xboxlive.com/users/me/profile/settings HTTP/1.1\r\nHost: profile.xboxlive.com\r\n"
	for _, a := range auth {
		s += "Authorization: " + a + "\r\n"
	}
	return s + "\r\n"
}

const an2429 = "HTTP/1.1 429 Too Many Requests\r\nContent-Length: 0\r\n\r\n"

// an2AnalyzeSAZ reads the archive and reports on it.
func an2AnalyzeSAZ(t *testing.T, b []byte) (*analyze.Report, analyze.Input) {
	t.Helper()
	a, err := analyze.New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	in, err := analyze.ReadSAZ(bytes.NewReader(b), int64(len(b)), a.Add)
	if err != nil {
		t.Fatalf("ReadSAZ: %v", err)
	}
	in.Name = "atk.saz"
	a.AddInput(in)
	return a.Report(), in
}

func an2Passes(v string) bool { return v == analyze.Green || v == analyze.Yellow }

// TestAttackSAZAnswerNamedAnotherWay: a session's answer stored as
// raw\1_s.txt, raw//1_s.txt, ./raw/1_s.txt, /raw/1_s.txt or raw/./1_s.txt.
// archive/zip's own file system view of the zip (zip.Reader.Open, which
// cleans names: backslashes as slashes, "." and "//" and a leading "/"
// dropped) gives it back as raw/1_s.txt, a 429; ReadSAZ passes the file
// over without a word, so two 429s in a row read as two sessions without
// an answer: yellow (a warning), read whole. ReadSAZ's doc: a session "whose files are
// listed twice or named two ways (... no two readers agree on which is the
// session) is skipped and named in Input.Problems"; the standard: a verdict
// fails closed on ambiguous input.
func TestAttackSAZAnswerNamedAnotherWay(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	build := func(answer string) []byte {
		var files []an2File
		for n := 1; n <= 2; n++ {
			files = append(files,
				an2File{fmt.Sprintf("raw/%d_c.txt", n), an2Request("XBL3.0 x=1;tok")},
				an2File{fmt.Sprintf("raw/%d_m.xml", n), an2Timers(t0.Add(time.Duration(n) * time.Second))},
				an2File{fmt.Sprintf(answer, n), an2429})
		}
		return an2SAZ(t, files)
	}
	if rep, in := an2AnalyzeSAZ(t, build("raw/%d_s.txt")); rep.Verdict != analyze.Red || !in.Complete() {
		t.Fatalf("control: two 429s in a row: verdict %s, complete %v; want red, complete", rep.Verdict, in.Complete())
	}
	for _, spelling := range []string{`raw\%d_s.txt`, "raw//%d_s.txt", "./raw/%d_s.txt", "/raw/%d_s.txt", "raw/./%d_s.txt", "x/../raw/%d_s.txt"} {
		b := build(spelling)
		// What archive/zip reads there.
		zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		other := "(none)"
		if f, err := zr.Open("raw/1_s.txt"); err == nil {
			got, _ := io.ReadAll(f)
			other = strings.SplitN(string(got), "\r\n", 2)[0]
		}
		rep, in := an2AnalyzeSAZ(t, b)
		t.Logf("%-20q archive/zip Open(raw/1_s.txt): %s; ReadSAZ: verdict %s, complete %v, calls %d, problems %d",
			spelling, other, rep.Verdict, in.Complete(), in.Calls, in.ProblemCount)
		if an2Passes(rep.Verdict) {
			t.Errorf("answers stored as %q (archive/zip.Reader.Open reads them as raw/N_s.txt: %s): verdict %s, complete %v; want red or incomplete",
				spelling, other, rep.Verdict, in.Complete())
		}
	}
}

// TestAttackSAZTwoHeadersOfOneName: ReadHAR makes "two Authorization,
// User-Agent or Retry-After headers" an entry's problem, "readers differ on
// which one counts" (RELIABILITY: the fix of the first attack). ReadSAZ
// takes the first (net/http's Header.Get) and reads the session whole.
// Two Retry-After headers, 1 then 30, before a call 2 s later: by the
// second, the call came before Retry-After had passed (red); by the first,
// one 429 (yellow). Two Authorization headers, two 429s: by the second
// user's, two 429s in a row of user 2 (red); by the first, one 429 each.
func TestAttackSAZTwoHeadersOfOneName(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	cases := []struct {
		name  string
		files []an2File
	}{
		{"two Retry-After", []an2File{
			{"raw/1_c.txt", an2Request("XBL3.0 x=1;tok")},
			{"raw/1_m.xml", an2Timers(t0)},
			{"raw/1_s.txt", "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 1\r\nRetry-After: 30\r\nContent-Length: 0\r\n\r\n"},
			{"raw/2_c.txt", an2Request("XBL3.0 x=1;tok")},
			{"raw/2_m.xml", an2Timers(t0.Add(2 * time.Second))},
			{"raw/2_s.txt", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"},
		}},
		{"two Authorization", []an2File{
			{"raw/1_c.txt", an2Request("XBL3.0 x=1;tok", "XBL3.0 x=2;tok")},
			{"raw/1_m.xml", an2Timers(t0)},
			{"raw/1_s.txt", an2429},
			{"raw/2_c.txt", an2Request("XBL3.0 x=3;tok", "XBL3.0 x=2;tok")},
			{"raw/2_m.xml", an2Timers(t0.Add(2 * time.Second))},
			{"raw/2_s.txt", an2429},
		}},
	}
	for _, c := range cases {
		rep, in := an2AnalyzeSAZ(t, an2SAZ(t, c.files))
		t.Logf("%s: verdict %s, complete %v, calls %d, problems %d", c.name, rep.Verdict, in.Complete(), in.Calls, in.ProblemCount)
		if an2Passes(rep.Verdict) {
			t.Errorf("%s in a session (readers differ on which counts; the second makes it red): verdict %s, complete %v; want red or incomplete",
				c.name, rep.Verdict, in.Complete())
		}
	}
}

// TestAttackSAZTimersAttributeTwice: a session's N_m.xml naming
// ClientBeginRequest twice in one element is not well-formed XML (XML 1.0,
// 3.1: "No attribute name may appear more than once in the same start-tag";
// .NET's XmlReader, which Fiddler reads it with, throws). encoding/xml
// keeps the last; ReadSAZ reads the session whole at that time, which puts
// a 200 between two 429s: yellow. By the first time, the 200 comes after
// them: red. The standard: malformed input never yields green or yellow
// read whole.
func TestAttackSAZTimersAttributeTwice(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	late, between := t0.Add(10*time.Second).Format(time.RFC3339Nano), t0.Add(500*time.Millisecond).Format(time.RFC3339Nano)
	twice := `<?xml version="1.0" encoding="utf-8"?><Session SID="2"><SessionTimers ClientBeginRequest="` + late +
		`" ClientBeginRequest="` + between + `"/><SessionFlags/></Session>`
	files := []an2File{
		{"raw/1_c.txt", an2Request("XBL3.0 x=1;tok")},
		{"raw/1_m.xml", an2Timers(t0)},
		{"raw/1_s.txt", an2429},
		{"raw/2_c.txt", an2Request("XBL3.0 x=1;tok")},
		{"raw/2_m.xml", twice},
		{"raw/2_s.txt", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"},
		{"raw/3_c.txt", an2Request("XBL3.0 x=1;tok")},
		{"raw/3_m.xml", an2Timers(t0.Add(time.Second))},
		{"raw/3_s.txt", an2429},
	}
	rep, in := an2AnalyzeSAZ(t, an2SAZ(t, files))
	t.Logf("verdict %s, complete %v, calls %d, problems %d", rep.Verdict, in.Complete(), in.Calls, in.ProblemCount)
	if an2Passes(rep.Verdict) {
		t.Errorf("a timers file naming ClientBeginRequest twice (not well-formed XML): verdict %s, complete %v; want red or incomplete", rep.Verdict, in.Complete())
	}
}
