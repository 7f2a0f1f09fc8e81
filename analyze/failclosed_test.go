package analyze

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// Pieces of the traces below: a call that passes (user 1), and a 429 with
// Retry-After 60 (user 2): two in a row fail.
func harOK(s int) string {
	return fmt.Sprintf(`{"startedDateTime": "2026-03-01T20:00:%02dZ", "request": {"method": "GET", "url": "https://social.xboxlive.com/users/me/people",
		"headers": [{"name": "Authorization", "value": "XBL3.0 x=1;t"}]}, "response": {"status": 200}}`, s)
}

func har429(s int, started string) string {
	if started == "" {
		started = fmt.Sprintf("2026-03-01T20:00:%02dZ", s)
	}
	return fmt.Sprintf(`{"startedDateTime": %q, "request": {"method": "GET", "url": "https://profile.xboxlive.com/users/me/profile/settings",
		"headers": [{"name": "Authorization", "value": "XBL3.0 x=2;t"}]}, "response": {"status": 429, "headers": [{"name": "Retry-After", "value": "60"}]}}`, started)
}

func csvLine(s, status int) string {
	return fmt.Sprintf(`"profile.xboxlive.com","https://profile.xboxlive.com/users/me/profile/settings","%d","","","","Retry-After: 60","","%d","80","2026-03-01T20:00:%02d.000Z","true","1","false","0","","false","","","0","","",""`+"\n",
		status/200, status, s)
}

func jsonDataCall(s, status int) string {
	return fmt.Sprintf(`{"Uri": "https://profile.xboxlive.com/users/me/profile/settings", "XboxUserId": "%d", "HttpStatusCode": %d, "ResponseHeaders": "Retry-After: 60", "ReqTimeUTC": %s, "IsGet": true}`,
		status/200, status, fileTimeJSON(at(float64(s))))
}

// sazOf builds a .saz of sessions (request, answer), each file stored
// unless deflate names it; corrupt changes the stored bytes of the files
// it names.
func sazOf(t *testing.T, sessions [][2]string, deflate map[string]bool, corrupt func(name string, b []byte)) *bytes.Reader {
	t.Helper()
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	for i, s := range sessions {
		for _, f := range [][2]string{{"c.txt", s[0]}, {"s.txt", s[1]}, {"m.xml", timers(at(float64(i)).Format(time.RFC3339))}} {
			name := fmt.Sprintf("raw/%d_%s", i+1, f[0])
			method := zip.Store
			if deflate[name] {
				method = zip.Deflate
			}
			w, err := z.CreateHeader(&zip.FileHeader{Name: name, Method: method})
			if err != nil {
				t.Fatal(err)
			}
			io.WriteString(w, f[1])
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	if corrupt != nil {
		zr, _ := zip.NewReader(bytes.NewReader(b), int64(len(b)))
		for _, f := range zr.File {
			off, _ := f.DataOffset()
			corrupt(f.Name, b[off:off+int64(f.CompressedSize64)])
		}
	}
	return bytes.NewReader(b)
}

const (
	sazGet  = "GET https://social.xboxlive.com/users/me/people HTTP/1.1\r\nHost: social.xboxlive.com\r\nAuthorization: XBL3.0 x=1;t\r\n\r\n"
	sazPut  = "GET https://profile.xboxlive.com/users/me/profile/settings HTTP/1.1\r\nHost: profile.xboxlive.com\r\nAuthorization: XBL3.0 x=2;t\r\n\r\n"
	saz200  = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
	saz429  = "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 60\r\nContent-Length: 2\r\n\r\n{}"
	csvHdr  = "v1510\n\"Host\",\"Uri\",\"XboxUserId\",\"MultiplayerCorrelationId\",\"RequestHeaders\",\"RequestBody\",\"ResponseHeaders\",\"ResponseBody\",\"HttpStatusCode\",\"EllapsedCallTimeMs\",\"ReqTimeUTC\",\"IsGet\",\"LoggerId\",\"IsShoulderTap\",\"ChangeNumber\",\"SessionReferenceUriPath\",\"IsInGameEvent\",\"EventName\",\"EventPlayerSessionId\",\"EventVersion\",\"EventDimensionData\",\"EventMeasurementData\",\"BreadCrumb\"\n"
	harHead = `{"log": {"version": "1.2", "entries": [`
)

// verdictOf reads a trace with read and returns the report's verdict (or
// the reader's error, as "error: ...") and the input.
func verdictOf(t *testing.T, read func(add func(*Call)) (Input, error)) (string, Input) {
	t.Helper()
	a, _ := New(nil, nil)
	in, err := read(a.Add)
	if err != nil {
		return "error: " + err.Error(), in
	}
	a.AddInput(in)
	return a.Report().Verdict, in
}

// place is where a report's JSON says a trace was first not read: its
// stop, or its first problem.
type place struct {
	Index  int    `json:"index"`
	Offset *int64 `json:"offset"`
}

func firstGap(t *testing.T, in Input) place {
	t.Helper()
	b, _ := json.Marshal(in)
	var doc struct {
		Stop     *place  `json:"stop"`
		Problems []place `json:"problems"`
	}
	json.Unmarshal(b, &doc)
	switch {
	case len(doc.Problems) > 0:
		return doc.Problems[0]
	case doc.Stop != nil:
		return *doc.Stop
	}
	return place{Index: -1}
}

// TestPartialReadFailsClosed: a trace that cannot be read whole is never
// green or yellow: every trace here holds a green call and then a part the
// reader cannot read as calls (where two 429s in a row, or such calls,
// would fail it), and its verdict is incomplete, its input naming the
// entry and the byte where it was not read. Before, each was judged on the
// calls before the gap: green or yellow, the gap a warning or a note.
func TestPartialReadFailsClosed(t *testing.T) {
	defer func(old int64) { maxTraceBytes = old }(maxTraceBytes)
	red := harHead + harOK(0) + ",\n" + har429(1, "") + ",\n" + har429(2, "") + "]}}"
	cut := red[:strings.LastIndex(red, "Retry-After")]
	badJSON := harHead + harOK(0) + `, {"request": tru}, ` + har429(1, "") + "]}}"
	noTime := harHead + harOK(0) + ", " + har429(1, "yesterday") + ", " + har429(2, "yesterday") + "]}}"
	big := harHead + harOK(0) + `, {"startedDateTime": "2026-03-01T20:00:00Z", "request": {"method": "GET", "url": "https://a/", "postData": {"text": "` +
		strings.Repeat("x", 1<<20) + `"}}}, ` + har429(1, "") + ", " + har429(2, "") + "]}}"
	csvRed := csvHdr + csvLine(0, 200) + csvLine(1, 429) + csvLine(2, 429)
	csvCut := csvRed[:len(csvRed)-2]                                   // in the last field
	csvCutField := csvRed[:strings.LastIndex(csvRed, `,"true","1"`)+1] // after a field
	csvBadRow := csvHdr + csvLine(0, 200) + `"profile.xboxlive.com","https://profile.xboxlive.com/users/me/profile/settings","2","","429"` + "\n" + csvLine(3, 200)
	csvOpen := csvHdr + csvLine(0, 200) + strings.Replace(csvLine(1, 429), `"80"`, `"80`, 1) + csvLine(2, 429)
	jsonRed := `[{"Endpoint": "profile.xboxlive.com", "Calls": [` + jsonDataCall(0, 200) + ", " + jsonDataCall(1, 429) + ", " + jsonDataCall(2, 429) + "]}]"
	jsonCut := jsonRed[:strings.LastIndex(jsonRed, "ReqTimeUTC")]
	jsonNoEndpoint := `[{"Endpoint": "profile.xboxlive.com", "Call": ` + jsonDataCall(0, 200) + `}, 5, {"Endpoint": "profile.xboxlive.com", "Calls": [` +
		jsonDataCall(1, 429) + ", " + jsonDataCall(2, 429) + "]}]"
	jsonNoCall := strings.ReplaceAll(jsonRed, `"Uri": "https://profile.xboxlive.com/users/me/profile/settings", "XboxUserId": "2"`, `"Uri": 5, "XboxUserId": "2"`)
	answers := [][2]string{{sazGet, saz200}, {sazPut, saz429}, {sazPut, saz429}}
	flate := sazOf(t, answers, map[string]bool{"raw/2_s.txt": true, "raw/3_s.txt": true}, func(name string, b []byte) {
		if name == "raw/2_s.txt" {
			copy(b, "\xff\xff\xff\xff") // not a deflate stream
		}
	})
	checksum := sazOf(t, answers, nil, func(name string, b []byte) {
		if name == "raw/2_s.txt" {
			b[len(b)-1] = ']' // {] in place of {}: the checksum no longer matches
		}
	})
	garbage := sazOf(t, [][2]string{{sazGet, saz200}, {sazPut, "garbage"}, {sazPut, "garbage"}}, nil, nil)
	har := func(s string) func(func(*Call)) (Input, error) {
		return func(add func(*Call)) (Input, error) { return ReadHAR(strings.NewReader(s), add) }
	}
	data := func(s string) func(func(*Call)) (Input, error) {
		return func(add func(*Call)) (Input, error) { return ReadData(strings.NewReader(s), add) }
	}
	saz := func(r *bytes.Reader) func(func(*Call)) (Input, error) {
		return func(add func(*Call)) (Input, error) { return ReadSAZ(r, r.Size(), add) }
	}
	tests := []struct {
		name   string
		read   func(func(*Call)) (Input, error)
		entry  int
		offset int
		limit  int64 // maxTraceBytes, when not 0
	}{
		{"HAR cut short", har(cut), 2, len(cut), 0},
		{"HAR not JSON past an entry", har(badJSON), 1, strings.Index(badJSON, "tru}") + 3, 0},
		{"HAR entries that are no calls", har(noTime), 1, strings.Index(noTime, har429(1, "yesterday")), 0},
		{"HAR over MaxTraceBytes", har(big), 1, 1 << 20, 1 << 20},
		{".saz file that is no deflate stream", saz(flate), 1, -1, 0},
		{".saz file whose checksum fails", saz(checksum), 1, -1, 0},
		{".saz answer that is no HTTP response", saz(garbage), 1, -1, 0},
		{"CSV row that is no call, in the middle", data(csvBadRow), 1, len(csvHdr) + len(csvLine(0, 200)), 0},
		{"CSV cut in a quoted field", data(csvCut), 2, len(csvHdr) + len(csvLine(0, 200)) + len(csvLine(1, 429)), 0},
		{"CSV cut after a field", data(csvCutField), 2, len(csvHdr) + len(csvLine(0, 200)) + len(csvLine(1, 429)), 0},
		{"CSV rows a quote left open joins", data(csvOpen), 1, len(csvHdr) + len(csvLine(0, 200)), 0},
		{"JSON data cut short", data(jsonCut), 2, len(jsonCut), 0},
		{"JSON data endpoint that is no object", data(jsonNoEndpoint), 1, strings.Index(jsonNoEndpoint, "5, {"), 0},
		{"JSON data call that is no call", data(jsonNoCall), 1, strings.Index(jsonNoCall, `{"Uri": 5`), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			maxTraceBytes = MaxTraceBytes
			if tt.limit != 0 {
				maxTraceBytes = tt.limit
			}
			a, _ := New(nil, nil)
			in, err := tt.read(a.Add)
			if err != nil {
				t.Fatal(err)
			}
			a.AddInput(in)
			rep := a.Report()
			if rep.Verdict != "incomplete" {
				t.Errorf("verdict %s on %d calls read (input %+v); want incomplete", rep.Verdict, rep.Calls, in)
			}
			got := firstGap(t, in)
			if got.Index != tt.entry || got.Offset == nil || tt.offset >= 0 && *got.Offset != int64(tt.offset) || tt.offset < 0 && *got.Offset <= 0 {
				off := "none"
				if got.Offset != nil {
					off = fmt.Sprint(*got.Offset)
				}
				t.Errorf("first gap: entry %d at byte %s; want entry %d at byte %d (input %+v)", got.Index, off, tt.entry, tt.offset, in)
			}
		})
	}
}

// TestInvalidUTF8Read: one bad byte in a string (a header, a body, the
// URL, a key; a lone surrogate) is read as part of the string, not as the
// end of the trace: a red trace with one stays red, read whole. Before,
// reading stopped at the entry holding it and the calls before were
// judged green.
func TestInvalidUTF8Read(t *testing.T) {
	tests := []struct{ name, entry string }{
		{"a header value", strings.Replace(harOK(0), `"value": "XBL3.0 x=1;t"`, `"value": "XBL3.0 x=1;t"}, {"name": "User-Agent", "value": "a`+"\xff"+`b"`, 1)},
		{"a request body", strings.Replace(harOK(0), `"headers"`, `"postData": {"text": "{\"a\": \"`+"\xc3"+`\"}"}, "headers"`, 1)},
		{"a response body", strings.Replace(harOK(0), `"status": 200`, `"status": 200, "content": {"text": "`+"\xed\xa0\x80"+`"}`, 1)},
		{"the URL", strings.Replace(harOK(0), `people"`, "people?q=\xfe\"", 1)},
		{"a key", strings.Replace(harOK(0), `"request"`, "\"\xffx\": 1, \"request\"", 1)},
		{"a lone surrogate", strings.Replace(harOK(0), `"value": "XBL3.0 x=1;t"`, `"value": "XBL3.0 x=1;t"}, {"name": "User-Agent", "value": "\ud800"`, 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			trace := harHead + tt.entry + ",\n" + har429(1, "") + ",\n" + har429(2, "") + "]}}"
			a, _ := New(nil, nil)
			in, err := ReadHAR(strings.NewReader(trace), a.Add)
			a.AddInput(in)
			if rep := a.Report(); err != nil || in.Calls != 3 || in.Truncated != "" || in.ProblemCount != 0 || rep.Verdict != Red {
				t.Errorf("%v: %d calls, verdict %s, input %+v; want 3 calls read whole, red", err, in.Calls, rep.Verdict, in)
			}
		})
	}
	data := `[{"Endpoint": "profile.xboxlive.com", "Calls": [` + strings.Replace(jsonDataCall(0, 200), `"Uri"`, "\"RequestBody\": \"\xff\", \"Uri\"", 1) +
		", " + jsonDataCall(1, 429) + ", " + jsonDataCall(2, 429) + "]}]"
	a, _ := New(nil, nil)
	in, err := ReadData(strings.NewReader(data), a.Add)
	a.AddInput(in)
	if rep := a.Report(); err != nil || in.Calls != 3 || rep.Verdict != Red {
		t.Errorf("JSON data: %v: %d calls, verdict %s, input %+v; want 3 calls, red", err, in.Calls, rep.Verdict, in)
	}
}

// TestAnalyzerBoundsFailClosed: calls an Analyzer does not judge, past its
// bound of calls (across traces) or of in-game events, leave the trace
// they came in incomplete from the first of them; calls added with no
// trace, an input of their own. Before, they were dropped unsaid.
func TestAnalyzerBoundsFailClosed(t *testing.T) {
	a, _ := New(nil, nil)
	a.maxCalls = 2
	first, second := harHead+harOK(0)+"]}}", harHead+harOK(1)+", "+har429(2, "")+", "+har429(3, "")+"]}}"
	for _, tr := range []struct{ name, text string }{{"a.har", first}, {"b.har", second}} {
		in, err := ReadHAR(strings.NewReader(tr.text), a.Add)
		if err != nil {
			t.Fatal(err)
		}
		in.Name = tr.name
		a.AddInput(in)
	}
	rep := a.Report()
	want := Problem{Index: 1, Offset: int64(strings.Index(second, har429(2, ""))), Reason: "the analysis holds at most 2 calls: 2 from here on not judged"}
	if b := rep.Inputs[1]; rep.Verdict != Incomplete || !rep.Inputs[0].Complete() || b.Stop == nil || *b.Stop != want {
		t.Errorf("verdict %s; inputs %+v, %+v; want b.har stopped at %v", rep.Verdict, rep.Inputs[0], b, want)
	}

	a, _ = New(nil, nil)
	a.maxEvents = 1
	line := "1|ABCD_1A2B3C4D.E|2026-03-01T20:00:00Z|a|b|c|d|e|f|g|h|i"
	a.Add(&Call{Index: 0, Time: t0, Method: "POST", URL: "https://data-vef.xboxlive.com/x", Authorization: auth("1"), RequestBody: []byte(line + "\n" + line)})
	rep = a.Report()
	want = Problem{Index: 0, Offset: -1, Reason: "the analysis holds at most 1 in-game events: 1 from here on not judged"}
	if len(rep.Inputs) != 1 || rep.Verdict != Incomplete || rep.Inputs[0].Stop == nil || *rep.Inputs[0].Stop != want {
		t.Errorf("events: verdict %s, inputs %+v; want one stopped at %v", rep.Verdict, rep.Inputs, want)
	}
}
