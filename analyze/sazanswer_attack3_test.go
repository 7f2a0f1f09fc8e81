package analyze_test

// A third outside attack on the trace analyzer (atk-analyze3): what a
// .saz session's answer file holds past the answer read.

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/xblgo/fgrl/analyze"
)

// attack3SAZ writes sessions 1..n (request, timers, answer s[i]), stored.
func attack3SAZ(t *testing.T, method string, t0 time.Time, answers ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	put := func(name, content string) {
		w, err := z.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, content)
	}
	for i, a := range answers {
		n := i + 1
		b := t0.Add(time.Duration(i) * time.Second).Format(time.RFC3339Nano)
		put(fmt.Sprintf("raw/%d_c.txt", n), method+" https://profile.xboxlive.com/users/me/profile/settings HTTP/1.1\r\nHost: profile.xboxlive.com\r\nAuthorization: XBL3.0 x=1;tok\r\n\r\n")
		put(fmt.Sprintf("raw/%d_m.xml", n), `<?xml version="1.0" encoding="utf-8"?><Session SID="`+fmt.Sprint(n)+`"><SessionTimers ClientConnected="`+b+
			`" ClientBeginRequest="`+b+`" ClientDoneResponse="`+b+`"/><SessionFlags/></Session>`)
		put(fmt.Sprintf("raw/%d_s.txt", n), a)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func attack3AnalyzeSAZ(t *testing.T, b []byte) (*analyze.Report, analyze.Input) {
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

const attack3429 = "HTTP/1.1 429 Too Many Requests\r\nContent-Length: 0\r\n\r\n"

// TestAttack3SAZAnswerAfterInterimNotPassedOver: analyze/doc.go "The verdict
// is ... incomplete, whatever the calls read, when a trace was not read
// whole ... What was not read may fail, so no gate passes it", and
// ReadSAZ's doc (saz.go:26-45): a session "whose answer is not an HTTP
// response" is a problem. An answer file holding an interim answer
// (RFC 9110 §15.2: "HTTP/1.1 100 Continue", which a client sending
// "Expect: 100-continue" gets before the final answer, and a raw capture
// of the connection holds) and then the final 429: http.ReadResponse reads
// the 100 alone, and the rest of the file (the 429) is never read. Two
// such sessions are two 429s in a row (red); the analyzer reads two calls
// answered 100, read whole: yellow (repeated-calls), exit 0.
func TestAttack3SAZAnswerAfterInterimNotPassedOver(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	if rep, _ := attack3AnalyzeSAZ(t, attack3SAZ(t, "GET", t0, attack3429, attack3429)); rep.Verdict != analyze.Red {
		t.Fatalf("control: two 429s in a row: verdict %s, want red", rep.Verdict)
	}
	interim := "HTTP/1.1 100 Continue\r\n\r\n" + attack3429
	rep, in := attack3AnalyzeSAZ(t, attack3SAZ(t, "GET", t0, interim, interim))
	if rep.Verdict == analyze.Green || rep.Verdict == analyze.Yellow {
		t.Errorf("two answers \"100 Continue\" then 429: verdict %s, complete %v, problems %v; want red or incomplete", rep.Verdict, in.Complete(), in.Problems)
	}
}

// TestAttack3SAZBytesAfterAnswerNotPassedOver: the same promise. An answer
// with Content-Length: 0 followed by a second answer (a 429) in the same
// file: the bytes after the first answer are never read, the session
// judged by the first (a 200). Two such sessions hide two 429s in a row.
func TestAttack3SAZBytesAfterAnswerNotPassedOver(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	two := "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n" + attack3429
	rep, in := attack3AnalyzeSAZ(t, attack3SAZ(t, "GET", t0, two, two))
	if rep.Verdict == analyze.Green || rep.Verdict == analyze.Yellow {
		t.Errorf("answer files holding a 200 then a 429: verdict %s, complete %v, problems %v; want red or incomplete", rep.Verdict, in.Complete(), in.Problems)
	}
}

// held: TestAttack3SAZGzipAnswerBodyCutNeverPanics: a 429 whose answer says
// Content-Encoding: gzip and holds a cut gzip stream (or a zip bomb's
// start): read as a 429, the body whatever inflates, red as two 429s.
func TestAttack3SAZGzipAnswerBodyCutNeverPanics(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	cut := "HTTP/1.1 429 Too Many Requests\r\nContent-Encoding: gzip\r\nContent-Length: 12\r\n\r\n\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff\x00\x00"
	rep, _ := attack3AnalyzeSAZ(t, attack3SAZ(t, "GET", t0, cut, cut))
	if rep.Verdict == analyze.Green || rep.Verdict == analyze.Yellow {
		t.Errorf("two 429s with cut gzip bodies: verdict %s, want red or incomplete", rep.Verdict)
	}
}
