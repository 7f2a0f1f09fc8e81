package analyze

import (
	"fmt"
	"strings"
	"testing"
)

// Attacks on the readers: traces that hold two 429s in a row (red) which
// a reader does not see, yet reports as read whole (Input.Complete), so
// that the verdict is green or yellow. The promise: a trace that cannot be
// read whole is never green or yellow.

// attackVerdict reads a trace with read and returns the report's verdict
// and the input.
func attackVerdict(t *testing.T, read func(add func(*Call)) (Input, error)) (string, Input) {
	t.Helper()
	a, _ := New(nil, nil)
	in, err := read(a.Add)
	if err != nil {
		return "error: " + err.Error(), in
	}
	a.AddInput(in)
	return a.Report().Verdict, in
}

// TestAttackCSVRowsSwallowed: a quote left open joins rows, as
// encoding/csv reads them with LazyQuotes; the reader catches the join
// only when it makes a row longer than the header. A quote opened in the
// header line, or in a row's field and closed in the same field of a later
// row (so the joined row has the header's fields), swallows the rows
// between unsaid: the 429s in them are not read, the trace is complete.
func TestAttackCSVRowsSwallowed(t *testing.T) {
	bare := func(s, status int) string { // a row as the logger writes it, unquoted
		return fmt.Sprintf("profile.xboxlive.com,https://profile.xboxlive.com/users/me/profile/settings,2,,,,Retry-After: 60,,%d,80,2026-03-01T20:00:%02d.000Z,true,1,false,0,,false,,,0,,,\n", status, s)
	}
	open := strings.Replace(bare(0, 200), ",,,,Retry-After: 60", `,,,"x" y,Retry-After: 60`, 1) // field 5 opens a quote
	closing := strings.Replace(bare(3, 200), ",,,,Retry-After: 60", `,,,z",Retry-After: 60`, 1) // and field 5 closes it
	tests := []struct{ name, csv string }{
		{"by the header", strings.Replace(csvHdr, `,"BreadCrumb"`, `,"BreadCrumb`, 1) + bare(1, 429) + bare(2, 429) +
			`z",` + bare(3, 200) + csvLine(4, 200)},
		{"by a row, closed in the same field", csvHdr + open + bare(1, 429) + bare(2, 429) + closing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			verdict, in := attackVerdict(t, func(add func(*Call)) (Input, error) { return ReadData(strings.NewReader(tt.csv), add) })
			if verdict == Green || verdict == Yellow {
				t.Errorf("verdict %s, %d calls, read whole %v; want red or incomplete", verdict, in.Calls, in.Complete())
			}
		})
	}
}

// TestAttackDataJSONCallsPassedOver: an endpoint whose first member is its
// calls (the first member is taken for the endpoint's name, whatever it
// holds), and a second JSON document after the array (which Json.NET's
// JsonConvert, Python's json and JSON.parse refuse), hold calls that are
// not read, unsaid: green, read whole.
func TestAttackDataJSONCallsPassedOver(t *testing.T) {
	ok := `{"Endpoint": "profile.xboxlive.com", "Calls": [` + jsonDataCall(0, 200) + "]}"
	red := `[` + jsonDataCall(1, 429) + ", " + jsonDataCall(2, 429) + "]"
	tests := []struct{ name, data string }{
		{"calls as an endpoint's first member", `[` + ok + `, {"Calls": ` + red + `}]`},
		{"a single call as the first member", `[` + ok + `, {"Call": ` + jsonDataCall(1, 429) + `, "Again": ` + jsonDataCall(2, 429) + `}]`},
		{"a second document", `[` + ok + `] [{"Endpoint": "profile.xboxlive.com", "Calls": ` + red + `}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			verdict, in := attackVerdict(t, func(add func(*Call)) (Input, error) { return ReadData(strings.NewReader(tt.data), add) })
			if verdict == Green || verdict == Yellow {
				t.Errorf("verdict %s, %d calls, read whole %v; want red or incomplete", verdict, in.Calls, in.Complete())
			}
		})
	}
}

// TestAttackStatusWrapsToInt16: a data file's HttpStatusCode is read
// whole (strconv.Atoi) and then kept in 16 bits: 65965 is judged a 429
// (and 429 + 65536·k in general), so a trace with no 429 is red, its
// evidence naming a status the trace does not hold.
func TestAttackStatusWrapsToInt16(t *testing.T) {
	csv := csvHdr + strings.Replace(csvLine(1, 200), `"200"`, `"65965"`, 1) + strings.Replace(csvLine(2, 200), `"200"`, `"65965"`, 1)
	a, _ := New(nil, nil)
	in, err := ReadData(strings.NewReader(csv), a.Add)
	a.AddInput(in)
	rep := a.Report()
	if err != nil || rep.ByRule[RuleThrottledCalls] != 0 {
		t.Errorf("%v: verdict %s, throttled-calls findings %d on a trace with no 429 (statuses 65965); want none", err, rep.Verdict, rep.ByRule[RuleThrottledCalls])
	}
}

// TestAttackTokenless429s: 429s in a row (and calls before Retry-After
// passed) on calls that carry no Authorization, as Chrome's default
// ("sanitized") HAR export and HAR scrubbers leave every call, are never
// judged: the trace is yellow (the no-token warning), exit 0.
func TestAttackTokenless429s(t *testing.T) {
	var b strings.Builder
	b.WriteString(harHead)
	for i := range 6 {
		if i > 0 {
			b.WriteString(",\n")
		}
		b.WriteString(strings.Replace(har429(i, ""), `{"name": "Authorization", "value": "XBL3.0 x=2;t"}`, `{"name": "Accept", "value": "*/*"}`, 1))
	}
	b.WriteString("]}}")
	verdict, in := attackVerdict(t, func(add func(*Call)) (Input, error) { return ReadHAR(strings.NewReader(b.String()), add) })
	if verdict != Red {
		t.Errorf("six 429s in a row without a token: verdict %s (read whole %v); want red", verdict, in.Complete())
	}
}
