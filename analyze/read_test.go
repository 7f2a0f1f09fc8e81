package analyze

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/xblgo/fgrl/datafile"
)

// readHAR reads a HAR text whole and in 3-byte reads, fails the test when
// the two differ, and returns the calls, copied.
func readHAR(t testing.TB, s string) ([]Call, Input, error) {
	t.Helper()
	calls, in, err := readHARWith(strings.NewReader(s))
	small, smin, serr := readHARWith(&smallReads{strings.NewReader(s)})
	if diff := cmp.Diff(calls, small, cmpopts.EquateEmpty()); diff != "" || smin.Truncated != in.Truncated || (err == nil) != (serr == nil) {
		t.Fatalf("3-byte reads differ (-whole +small):\n%s\ntruncated %q, %q; errors %v, %v", diff, in.Truncated, smin.Truncated, err, serr)
	}
	return calls, in, err
}

// smallReads returns at most 3 bytes a Read, so the decoder's reads end
// anywhere: inside strings, escapes and runs of backslashes.
type smallReads struct{ *strings.Reader }

func (s *smallReads) Read(p []byte) (int, error) { return s.Reader.Read(p[:min(len(p), 3)]) }

func readHARWith(r io.Reader) ([]Call, Input, error) {
	var out []Call
	in, err := ReadHAR(r, func(c *Call) {
		cp := *c
		cp.RequestBody, cp.ResponseBody = bytes.Clone(c.RequestBody), bytes.Clone(c.ResponseBody)
		out = append(out, cp)
	})
	return out, in, err
}

// TestReadHAR: the fields kept, from a browser-style entry with other keys,
// header name case, a value before its name, a base64 body and the token
// redacted.
func TestReadHAR(t *testing.T) {
	in := `{"log": {"version": "1.2", "creator": {"name": "WebInspector"}, "pages": [{"id": "p"}], "entries": [
	  {"startedDateTime": "2026-03-01T21:00:00.5+01:00", "time": 12.5, "request": {"method": "POST",
	   "url": "https://profile.xboxlive.com/users/batch/profile/settings",
	   "headers": [{"value": "XBL3.0 x=9;secret", "name": "authorization"}, {"name": "Accept", "value": "*/*"}],
	   "postData": {"mimeType": "application/json", "text": "{\"userIds\":[\"1\"]}"}},
	   "response": {"status": 429, "headers": [{"name": "retry-after", "value": "3"}],
	   "content": {"size": 2, "text": "e30=", "encoding": "base64"}}, "cache": {}, "timings": {}}]}}`
	got, inp, err := readHAR(t, in)
	if err != nil || inp.Calls != 1 || inp.ProblemCount != 0 {
		t.Fatalf("%v %+v", err, inp)
	}
	want := []Call{{Offset: int64(strings.Index(in, `{"startedDateTime"`)), Time: at(0.5), Duration: 12500 * time.Microsecond, Method: "POST",
		URL: "https://profile.xboxlive.com/users/batch/profile/settings", Authorization: "XBL3.0 x=9;REDACTED",
		Status: 429, RetryAfter: "3", RequestBody: []byte(`{"userIds":["1"]}`), ResponseBody: []byte(`{}`)}}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestReadHARBadInput: one bad entry is skipped with its index; a file cut
// short gives the calls before the cut and says so; what is no HAR at all
// is an error.
func TestReadHARBadInput(t *testing.T) {
	entry := `{"startedDateTime": "2026-03-01T20:00:00Z", "request": {"method": "GET", "url": "https://a/"}}`
	tests := []struct {
		name      string
		in        string
		calls     int
		problems  []Problem
		truncated string
		err       string
	}{
		{"bad entries skipped", `{"log": {"entries": [` + entry + `, {"startedDateTime": "yesterday", "request": {"method": "GET", "url": "u"}},
			{"startedDateTime": "2026-03-01T20:00:00Z", "request": {}}, 5, ` + entry + `]}}`, 2,
			[]Problem{{1, 0, `startedDateTime "yesterday" is not an ISO 8601 time`}, {2, 0, "the request has no method or url"}, {3, 0, "not an object"}}, "", ""},
		{"cut short", `{"log": {"entries": [` + entry + `, ` + entry[:40], 1, nil, "the file ends inside entry 1", ""},
		{"bad JSON mid-file", `{"log": {"entries": [` + entry + `, {"x": tru}]}}`, 1, nil, "entry 1 is not valid JSON", ""},
		{"empty", `{"log": {"entries": []}}`, 0, nil, "", ""},
		{"not JSON", `hello`, 0, nil, "", "not a trace: HAR"},
		{"no entries", `{"log": {}}`, 0, nil, "", `no "entries"`},
		{"entries not an array", `{"log": {"entries": {}}}`, 0, nil, "", "log.entries is not an array"},
		{"an array", `[]`, 0, nil, "", "not a trace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls, in, err := readHAR(t, tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !errors.Is(err, ErrNotTrace) {
					t.Errorf("err %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || len(calls) != tt.calls || in.Calls != tt.calls || !strings.HasPrefix(in.Truncated, tt.truncated) ||
				(tt.truncated == "") != (in.Truncated == "") {
				t.Errorf("err %v, %d calls, input %+v; want %d calls, truncated %q", err, len(calls), in, tt.calls, tt.truncated)
			}
			if diff := cmp.Diff(tt.problems, in.Problems, cmpopts.EquateEmpty(), cmpopts.IgnoreFields(Problem{}, "Offset")); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

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

// TestReadHARChunks: a trace of many entries, with strings holding
// brackets, commas, quotes and backslashes, cut into chunks, reads the same
// as in sequence.
func TestReadHARChunks(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"log": {"entries": [`)
	for i := range 3000 {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, `{"startedDateTime": "2026-03-01T20:00:%02d.%03dZ", "request": {"method": "POST", "url": "https://a/%d",
			"postData": {"text": "{\"x\": \"],}{[\\\\\\\"%s\"}"}}, "response": {"status": 200}}`, i/1000, i%1000, i, strings.Repeat("\\\\", i%3))
	}
	b.WriteString(`]}}`)
	calls, in, err := readHAR(t, b.String())
	if err != nil || len(calls) != 3000 || in.Truncated != "" || in.ProblemCount != 0 {
		t.Fatalf("%v: %d calls, %+v", err, len(calls), in)
	}
	for i, c := range calls {
		if c.Index != i || c.URL != fmt.Sprintf("https://a/%d", i) {
			t.Fatalf("call %d is %d %s", i, c.Index, c.URL)
		}
	}
}

func FuzzReadHAR(f *testing.F) {
	f.Add([]byte(`{"log": {"entries": [{"startedDateTime": "2026-03-01T20:00:00Z", "request": {"method": "GET", "url": "https://a/",
		"headers": [{"name": "Authorization", "value": "XBL3.0 x=1;t"}]}, "response": {"status": 429, "content": {"text": "eA==", "encoding": "base64"}}}]}}`))
	f.Add([]byte(`{"log": {"entries": []}}`))
	f.Add([]byte(`{"log": {"x": [1, {"y": 2}], "entries": [{}, 5, "s"]}}`))
	f.Add([]byte(farApart)) // timestamps 294 years apart: once an overflow in the timeline
	f.Add([]byte(`{"log": {"version": "1.2", "_fgrlLimits": {"revision": "x", "rules": []}, "entries": []}}`))
	f.Add([]byte(`{"log": {"entries": [{"startedDateTime": "2026-03-01T20:00:00Z", "request": {"method": "POST", "url": "https://data-vef.xboxlive.com/x",
		"postData": {"text": "1|ABCD_1A2B3C4D.E|2026-03-01T20:00:00Z|a|b|c|d|e|f|g|h|i\n{\"name\":\"Microsoft.XboxLive.T1a2b3c4d.E\",\"time\":\"x\"}"}}, "response": {"status": 200}},
		{"startedDateTime": "2026-03-01T20:00:01Z", "request": {"method": "POST", "url": "https://86e2.playfabapi.com/Client/x",
		"headers": [{"name": "User-Agent", "value": "PlayFab Agent"}]}, "response": {"status": 200}}]}}`))
	// Invalid UTF-8 and a lone surrogate, read as U+FFFD; and a trace cut
	// short, in a string and between entries.
	f.Add([]byte("{\"log\": {\"entries\": [{\"startedDateTime\": \"2026-03-01T20:00:00Z\", \"request\": {\"method\": \"GET\", \"url\": \"https://a/\xff\"," +
		"\"headers\": [{\"name\": \"User-Agent\", \"value\": \"\xc3\"}]}, \"response\": {\"status\": 429, \"content\": {\"text\": \"\\ud800\\u00\"}}}]}}"))
	f.Add([]byte(`{"log": {"entries": [{"startedDateTime": "2026-03-01T20:00:00Z", "request": {"method": "GET", "url": "https://a`))
	f.Add([]byte(`{"log": {"entries": [{"startedDateTime": "2026-03-01T20:00:00Z", "request": {"method": "GET", "url": "https://a/"}},`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if raw, _ := HARLimits(bytes.NewReader(b)); raw != nil && !json.Valid(raw) {
			t.Fatalf("HARLimits gave %q, not JSON", raw)
		}
		readHAR(t, string(b)) // both ways agree
		a, _ := New(nil, nil)
		in, err := ReadHAR(bytes.NewReader(b), func(c *Call) {
			if c.Method == "" || c.URL == "" || strings.Contains(c.Authorization, ";") && !strings.HasSuffix(c.Authorization, ";REDACTED") {
				t.Fatalf("bad call %+v", c)
			}
			a.Add(c)
		})
		if err == nil && in.Calls+in.ProblemCount > len(b) {
			t.Fatalf("%d calls from %d bytes", in.Calls, len(b))
		}
		a.AddInput(in)
		checkGap(t, in, int64(len(b)), report(t, a))
	})
}

// checkGap fails t unless in names where it was not read whole (an entry,
// and a byte within the size bytes read) exactly when it was not, and
// rep's verdict is incomplete exactly then.
func checkGap(t *testing.T, in Input, size int64, rep *Report) {
	t.Helper()
	gap := in.Gap()
	if in.Complete() != (gap == nil) || gap != nil && (gap.Index < 0 || gap.Offset < 0 || gap.Offset > size) {
		t.Fatalf("input %+v: gap %v within %d bytes", in, gap, size)
	}
	if (rep.Verdict == Incomplete) == in.Complete() {
		t.Fatalf("verdict %s on an input complete: %v", rep.Verdict, in.Complete())
	}
}

// farApart is a HAR of two calls by one user 294 years apart.
const farApart = `{"log": {"entries": [
	{"startedDateTime": "1823-03-01T20:00:00Z", "request": {"method": "GET", "url": "https://profile.xboxlive.com/users/me/profile/settings",
		"headers": [{"name": "Authorization", "value": "XBL3.0 x=1;t"}]}, "response": {"status": 200}},
	{"startedDateTime": "2117-03-01T20:00:00Z", "request": {"method": "GET", "url": "https://profile.xboxlive.com/users/me/profile/settings",
		"headers": [{"name": "Authorization", "value": "XBL3.0 x=1;t"}]}, "response": {"status": 429}}]}}`

// report makes a's report and renders it as JSON and HTML, as xblcall
// analyze does: whatever the trace, none of it panics.
func report(t *testing.T, a *Analyzer) *Report {
	t.Helper()
	rep := a.Report()
	if _, err := json.Marshal(rep); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteHTML(io.Discard); err != nil {
		t.Fatal(err)
	}
	var x bytes.Buffer
	if err := rep.WriteJUnit(&x); err != nil || xml.Unmarshal(x.Bytes(), new(junitSuites)) != nil {
		t.Fatalf("JUnit: %v\n%s", err, x.Bytes())
	}
	x.Reset()
	if err := rep.WriteSARIF(&x); err != nil || !json.Valid(x.Bytes()) {
		t.Fatalf("SARIF: %v\n%s", err, x.Bytes())
	}
	return rep
}

// TestFarApart: a trace whose calls span centuries is analyzed: the
// timeline's buckets grow to fit (it once overflowed and panicked).
func TestFarApart(t *testing.T) {
	a, _ := New(nil, nil)
	in, err := ReadHAR(strings.NewReader(farApart), a.Add)
	if err != nil || in.Calls != 2 {
		t.Fatalf("%v %+v", err, in)
	}
	rep := report(t, a)
	g := rep.Groups[0]
	if len(g.Timeline) > maxTimeline || g.Timeline[0] != 1 || g.Timeline[len(g.Timeline)-1] != 1 || g.AvgGap <= 0 {
		t.Errorf("timeline of %d buckets of %v: first %d, last %d; average gap %v", len(g.Timeline), g.Bucket,
			g.Timeline[0], g.Timeline[len(g.Timeline)-1], g.AvgGap)
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

// FuzzReadRules: rules ReadRules reads, New takes too, and they analyze
// a trace; what it refuses is a *datafile.Error of at most 400 bytes.
func FuzzReadRules(f *testing.F) {
	f.Add([]byte(`{"burst": {"window": "1s", "size": 5}, "batches": [{"host": "h", "path": "/b", "field": "f", "minUsers": 2}]}`))
	f.Add([]byte(`{"polling": {"tolerance": 0.5, "minCalls": 3, "maxGap": 100}}`))
	f.Add([]byte("services: [\"*.example.net\"]\nevents: {window: 1s, size: 3}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ReadRules(bytes.NewReader(b))
		if err != nil {
			var de *datafile.Error
			if !errors.As(err, &de) || len(err.Error()) > 400 {
				t.Fatalf("ReadRules error %T %q, want a *datafile.Error of at most 400 bytes", err, err)
			}
			return
		}
		a, err := New(nil, r)
		if err != nil {
			t.Fatalf("ReadRules read rules New refuses: %v", err)
		}
		var tr trace
		tr.add(0, "POST", "https://profile.xboxlive.com/users/batch/profile/settings", "1", 429)
		tr.add(0.1, "POST", "https://profile.xboxlive.com/users/batch/profile/settings", "1", 200)
		for i := range tr {
			a.Add(&tr[i])
		}
		a.Report()
	})
}

// TestHARLimits: the limits a simulate trace names are read from before
// its entries; a HAR that names none gives nil.
func TestHARLimits(t *testing.T) {
	for _, tc := range []struct{ har, want string }{
		{`{"log": {"version": "1.2", "_fgrlLimits": {"revision": "2020+example"}, "entries": []}}`, `{"revision": "2020+example"}`},
		{`{"log": {"entries": [], "_fgrlLimits": {"revision": "late"}}}`, ""},
		{`{"log": {"version": "1.2", "entries": []}}`, ""},
		{`{"other": 1, "log": {"_fgrlLimits": [1]}}`, "[1]"},
	} {
		got, err := HARLimits(strings.NewReader(tc.har))
		if err != nil || string(got) != tc.want {
			t.Errorf("%s: %q %v, want %q", tc.har, got, err, tc.want)
		}
	}
	if _, err := HARLimits(strings.NewReader("[]")); !errors.Is(err, ErrNotTrace) {
		t.Errorf("not a HAR: %v", err)
	}
}
