package analyze

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fileTimeJSON is t as the logger's JSON writes a ReqTimeUTC: the bits of
// its Windows file time read as a double.
func fileTimeJSON(t time.Time) string {
	return strconv.FormatFloat(math.Float64frombits(uint64(t.UnixNano()/100+fileTimeEpoch)), 'g', -1, 64)
}

// TestReadData: the trace analyzer's data files, in both its forms, on
// traces written for this test: examples/xlta-data.csv (v1510: presence
// writes answered 429 and ignored, and a burst of in-game events) and the
// same as JSON. Each call keeps its time, method (IsGet), user (its
// XboxUserId), User-Agent and Retry-After, and both analyses find the
// same.
func TestReadData(t *testing.T) {
	f, err := os.Open("../examples/xlta-data.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var csvCalls []Call
	in, err := ReadData(f, func(c *Call) { csvCalls = append(csvCalls, *c) })
	if err != nil || in.Calls != 18 || in.ProblemCount != 0 {
		t.Fatalf("CSV: %v, %+v", err, in)
	}
	first := csvCalls[0]
	if first.Method != "POST" || first.Authorization != "XBL3.0 x=2533274791234567;REDACTED" || !strings.HasPrefix(first.UserAgent, "XboxServicesAPI/") ||
		!first.Time.Equal(time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)) || csvCalls[3].Status != 429 || csvCalls[3].RetryAfter != "15" || csvCalls[17].InGameEvent != "PlayerSessionStart" {
		t.Errorf("CSV calls: %+v ... %+v", first, csvCalls[17])
	}
	var doc strings.Builder
	doc.WriteString(`[{"Endpoint": "userpresence.xboxlive.com", "Calls": [`)
	for i, c := range csvCalls[:6] {
		fmt.Fprintf(&doc, `%s{"Uri": %q, "XboxUserId": "2533274791234567", "RequestHeaders": %q, "ResponseHeaders": "Retry-After: %s", "HttpStatusCode": %d, "ReqTimeUTC": %s, "IsGet": false}`,
			map[bool]string{true: "", false: ","}[i == 0], c.URL, "User-Agent: "+c.UserAgent, c.RetryAfter, c.Status, fileTimeJSON(c.Time))
	}
	doc.WriteString(`]}, {"Endpoint": "inGameEvents"`)
	for _, c := range csvCalls[6:] {
		fmt.Fprintf(&doc, `, "Call": {"XboxUserId": "2533274791234567", "IsInGameEvent": "True", "EventName": "PlayerSessionStart", "ReqTimeUTC": %s}`, fileTimeJSON(c.Time))
	}
	doc.WriteString(`}]`)
	var jsonCalls []Call
	in, err = ReadData(strings.NewReader(doc.String()), func(c *Call) { jsonCalls = append(jsonCalls, *c) })
	if err != nil || in.Calls != 18 || in.ProblemCount != 0 {
		t.Fatalf("JSON: %v, %+v\n%s", err, in, doc.String())
	}
	findings := func(calls []Call) map[string]int {
		rep, err := Analyze(calls, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return rules(rep)
	}
	want := map[string]int{"throttled-calls/fail": 2, "call-frequency/warn": 1, "burst/warn": 1, "repeated-calls/warn": 1, "polling/warn": 1, "events-burst/warn": 1}
	for name, calls := range map[string][]Call{"CSV": csvCalls, "JSON": jsonCalls} {
		if diff := cmp.Diff(want, findings(calls)); diff != "" {
			t.Errorf("%s findings (-want +got):\n%s", name, diff)
		}
	}
}

// TestDataStatusNeverWraps: a data file's HttpStatusCode is 0 (an in-game
// event's), empty, or an integer from 100 to 999; any other (65965, which
// 16 bits wrap to 429; -429; 429.5; 0x1AD) makes the call a problem, never
// a status it is not. Before, 65965 was judged a 429: a trace with none
// was red.
func TestDataStatusNeverWraps(t *testing.T) {
	for _, tt := range []struct {
		status           string
		csvCalls, jCalls int // read from the CSV (2 rows) and the JSON (1 call)
	}{{"429", 2, 1}, {"0", 2, 1}, {"", 2, 0}, {"65965", 0, 0}, {"-429", 0, 0}, {"429.5", 0, 0}, {"0x1AD", 0, 0}, {"4294967725", 0, 0}, {"0429", 0, 0}, {"042", 0, 0}, {"99", 0, 0}, {"4.29e2", 2, 1}} {
		t.Run(tt.status, func(t *testing.T) {
			csv := csvHdr + strings.Replace(csvLine(1, 200), `"200"`, `"`+tt.status+`"`, 1) + strings.Replace(csvLine(2, 200), `"200"`, `"`+tt.status+`"`, 1)
			data := `[{"Endpoint": "profile.xboxlive.com", "Calls": [` + strings.Replace(jsonDataCall(1, 200), `"HttpStatusCode": 200`, `"HttpStatusCode": "`+tt.status+`"`, 1) + "]}]"
			for _, f := range []struct {
				name, text string
				calls      int
			}{{"CSV", csv, tt.csvCalls}, {"JSON", data, tt.jCalls}} {
				a, _ := New(nil, nil)
				in, err := ReadData(strings.NewReader(f.text), a.Add)
				a.AddInput(in)
				rep := a.Report()
				reads429 := tt.status == "429" || tt.status == "4.29e2"
				if err != nil || in.Calls != f.calls || (rep.Verdict == Incomplete) != (f.calls == 0) || !reads429 && rep.ByRule[RuleThrottledCalls] != 0 {
					t.Errorf("%s: %v, %d calls, verdict %s, throttled-calls %d; want %d calls", f.name, err, in.Calls, rep.Verdict, rep.ByRule[RuleThrottledCalls], f.calls)
				}
			}
		})
	}
	// What the readers never give: Add keeps it as no status, never wrapped.
	var tr trace
	tr.add(0, "GET", "https://profile.xboxlive.com/users/me/profile/settings", "1", 65965)
	tr.add(1, "GET", "https://profile.xboxlive.com/users/me/profile/settings", "1", 65965)
	if rep := tr.report(t); rep.ByRule[RuleThrottledCalls] != 0 || rep.Groups[0].Server429s != 0 {
		t.Errorf("Add of status 65965: throttled-calls %d, 429s %d; want none", rep.ByRule[RuleThrottledCalls], rep.Groups[0].Server429s)
	}
}

// TestReadDataErrors: what is no data file is refused with ErrNotTrace; a
// row that is no call is named and skipped.
func TestReadDataErrors(t *testing.T) {
	for _, bad := range []string{"", "{}", "v1", "hello"} {
		if _, err := ReadData(strings.NewReader(bad), func(*Call) {}); err == nil {
			t.Errorf("ReadData(%q) accepted", bad)
		}
	}
	in, err := ReadData(strings.NewReader(csvHdr+"\"a\",\"b\"\n\"h\",\"https://h/\",\"1\",\"\",\"\",\"\",\"\",\"\",\"200\",\"1\",\"not a time\",\"true\"\n"), func(*Call) {})
	if err != nil || in.Calls != 0 || in.ProblemCount != 2 {
		t.Errorf("rows that are no calls: %v %+v", err, in)
	}
	in, err = ReadData(strings.NewReader(`[{"Endpoint": "h", "Calls": [{"Uri": "https://h/", "ReqTimeUTC": 1e300}, 5]}]`), func(*Call) {})
	if err != nil || in.Calls != 0 || in.ProblemCount != 2 {
		t.Errorf("JSON calls that are no calls: %v %+v", err, in)
	}
}

func FuzzReadData(f *testing.F) {
	b, _ := os.ReadFile("../examples/xlta-data.csv")
	f.Add(b)
	f.Add([]byte(`[{"Endpoint": "userpresence.xboxlive.com", "Calls": [{"Uri": "https://userpresence.xboxlive.com/users/xuid(1)", "XboxUserId": "1", "ReqTimeUTC": ` + fileTimeJSON(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)) + `, "IsGet": true}]}]`))
	f.Add([]byte("v1509\n\n\"\"\"\n"))
	// Invalid UTF-8, and files cut short: in a quoted field, in a call.
	f.Add([]byte("v1510\nh\n\"h\xff\",\"https://h/\xc3\",\"1\",\"\",\"User-Agent: \xed\xa0\x80\",\"\",\"\",\"\",\"429\",\"1\",\"2026-03-01T20:00:00Z\",\"true\"\n"))
	f.Add(b[:len(b)/2])
	f.Add([]byte(`[{"Endpoint": "h", "Calls": [{"Uri": "https://h/` + "\xff" + `", "RequestBody": "\ud800", "ReqTimeUTC": ` + fileTimeJSON(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)) + `}, {"Uri": "ht`))
	// Rows a quote joins, in the header and in the same field of two rows;
	// an endpoint's first member not its name; a second document; a status
	// 16 bits would wrap.
	f.Add([]byte(strings.Replace(csvHdr, `,"BreadCrumb"`, `,"BreadCrumb`, 1) + csvLine(1, 429) + `z",` + csvLine(2, 429)))
	f.Add([]byte(csvHdr + strings.Replace(csvLine(0, 200), `"80"`, `"x" y`, 1) + csvLine(1, 429) + strings.Replace(csvLine(2, 200), `"80"`, `z"`, 1)))
	f.Add([]byte(`[{"Calls": [` + jsonDataCall(1, 429) + `]}] [{"Endpoint": "h"}]`))
	f.Add([]byte(csvHdr + strings.Replace(csvLine(1, 200), `"200"`, `"65965"`, 1)))
	// A header cut, or of too few columns; a Uri at another host than the
	// call's Host; a JSON status named twice, or not at all.
	f.Add([]byte(csvHdr[:40]))
	f.Add([]byte("v1510\n\"Host\",\"Uri\"\n" + csvLine(1, 429)))
	f.Add([]byte(csvHdr + csvLine(0, 429) + strings.Replace(csvLine(1, 429), "https://profile.xboxlive.com", "https://cdn.example.net", 1)))
	f.Add([]byte(`[{"Endpoint": "profile.xboxlive.com", "Calls": [` + strings.Replace(jsonDataCall(1, 429), `"HttpStatusCode": 429`, `"HttpStatusCode": 429, "httpstatuscode": 200`, 1) +
		", " + strings.Replace(jsonDataCall(2, 429), `"HttpStatusCode"`, `"X"`, 1) + `]}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		sameRowsAsEncodingCSV(t, b)
		a, _ := New(nil, nil)
		in, err := ReadData(bytes.NewReader(b), func(c *Call) {
			if c.Time.IsZero() || c.URL == "" && c.InGameEvent == "" {
				t.Fatalf("bad call %+v", c)
			}
			a.Add(c)
		})
		if err == nil && in.Calls > len(b) {
			t.Fatalf("%d calls from %d bytes", in.Calls, len(b))
		}
		a.AddInput(in)
		checkGap(t, in, int64(len(b)), report(t, a))
	})
}

// sameRowsAsEncodingCSV fails t unless the data files' CSV reader reads
// b's rows as encoding/csv does with LazyQuotes: the same fields (their
// first maxFields, each cut to maxField bytes) and as many.
func sameRowsAsEncodingCSV(t *testing.T, b []byte) {
	t.Helper()
	want := csv.NewReader(bytes.NewReader(b))
	want.FieldsPerRecord, want.LazyQuotes = -1, true
	rows := &csvRows{r: bufio.NewReader(bytes.NewReader(b))}
	for i := 0; ; i++ {
		rec, err := want.Read()
		more := rows.next()
		if err != nil || !more {
			if err == nil || more {
				t.Fatalf("row %d: encoding/csv %v, %q; the reader %v", i, err, rec, more)
			}
			return
		}
		got := make([]string, min(rows.n, maxFields))
		for j := range got {
			got[j] = string(rows.fields[j])
		}
		for j := range rec {
			rec[j] = rec[j][:min(len(rec[j]), maxField)]
		}
		if rows.n != len(rec) || !slices.Equal(got, rec[:len(got)]) {
			t.Fatalf("row %d: %d fields %q, encoding/csv %d: %q", i, rows.n, got, len(rec), rec)
		}
	}
}

// TestCSVRowsAsEncodingCSV: quotes doubled, left open and lazy, line ends
// in and out of fields, empty lines: the rows are encoding/csv's.
func TestCSVRowsAsEncodingCSV(t *testing.T) {
	for _, in := range []string{
		"a,b\nc,d", "a,b\r\nc,d\r\n", "\n\n a,b\n\r\n,\n", `"a""b","c` + "\n" + `d",e`, `"a"b,c"` + "\n", `a"b,"c"d"` + "\n", "\"a\r\nb\"\r\n",
		"a\rb,c\r", "\"a\", \"b\"\n", `"abc`, `"ab"` + "\r" + `x"` + "\n", `""` + "\n" + `"""",""""""`, strings.Repeat("f,", 30) + "\n",
		`"` + strings.Repeat(`x""y`+"\r\n", 50_000) + `",z` + "\n" + strings.Repeat("ab\rc", 60_000) + ",d\r\n", // fields past maxField and buffers
	} {
		sameRowsAsEncodingCSV(t, []byte(in))
	}
}
