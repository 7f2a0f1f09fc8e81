package analyze

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
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
	entry := `{"startedDateTime": "2026-03-01T20:00:00Z", "request": {"method": "GET", "url": "https://a/"}, "response": {"status": 200}}`
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
			[]Problem{{1, 0, "startedDateTime (9 bytes, not shown) is not an ISO 8601 time"}, {2, 0, "the request has no method or url"}, {3, 0, "not an object"}}, "", ""},
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
	// What follows the entries (a second entries or log, a second
	// document), statuses that are none, a header read whole, a field twice.
	f.Add([]byte(harHead + harOK(0) + `], "entries": [` + har429(1, "") + "]}, \"log\": {}}\n{}"))
	f.Add([]byte(strings.Replace(harHead+har429(1, "")+"]}}", `"status": 429`, `"status": "429"`, 1)))
	f.Add([]byte(harHead + strings.Replace(harOK(0), `{"name": "Authorization", "value": "XBL3.0 x=1;t"}`,
		`{"value": "XBL3.0 x=1;secret", "name": "User-Agent", "name": "Authorization", "value": 5}`, 1) + "]}}"))
	f.Add([]byte(harHead + strings.Replace(harOK(0), `"status": 200`, `"status": 65965, "status": 200`, 1) + "]}}"))
	// An entry without response.status, a host in another IPv4 spelling, a
	// path of dot segments and a %3F.
	f.Add([]byte(harHead + strings.Replace(harOK(0), `"status": 200`, `"code": 200`, 1) + ", " + har429(1, "") + "]}}"))
	f.Add([]byte(harHead + strings.Replace(harOK(0), "social.xboxlive.com", "0x7f.1:8080", 1) + ", " +
		strings.Replace(har429(1, ""), "/users/me/profile/settings", "/users/./x/../me/%2e%2E/me/profile/settings%3Ft=1", 1) + "]}}"))
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

// TestHARReadToItsEnd: ReadHAR reads past the entries to the end of the
// input, and what follows them that could hold calls another reader reads
// stops it there, naming the entry after the last and the byte: a second
// "entries" (or "log") member, which JSON.parse, Python's json and
// encoding/json take in place of the first (the last of a repeated name
// wins), a second document, garbage, a file cut after the entries. The
// 429s there make no red verdict, but the trace is not green: incomplete.
// Before, ReadHAR stopped at the first entries' end: each read green and
// whole.
func TestHARReadToItsEnd(t *testing.T) {
	red := har429(1, "") + ",\n" + har429(2, "")
	whole := harHead + harOK(0) + "]}}"
	tests := []struct {
		name, har, at string // at: where reading stops
	}{
		{"a second entries array", harHead + harOK(0) + `], "entries": [` + red + "]}}", `"entries": [{`},
		{"a second log object", `{"log": {"entries": [` + harOK(0) + `]}, "log": {"entries": [` + red + "]}}", `"log": {"entries": [{"startedDateTime": "2026-03-01T20:00:01Z"`},
		{"a second JSON document", whole + "\n" + harHead + red + "]}}", "\n" + harHead},
		{"garbage after the entries", harHead + harOK(0) + `], "pages": [` + red + ` {{{ not json`, "{{{ not json"},
		{"the file cut right after the entries", harHead + harOK(0) + "]", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			verdict, in := verdictOf(t, func(add func(*Call)) (Input, error) { return ReadHAR(strings.NewReader(tt.har), add) })
			want := int64(len(tt.har))
			if tt.at != "" {
				want = int64(strings.LastIndex(tt.har, tt.at))
				if tt.at[0] == '\n' {
					want++
				}
			}
			if verdict != Incomplete || in.Stop == nil || in.Stop.Index != 1 || in.Stop.Offset != want {
				t.Errorf("verdict %s, stop %v; want incomplete, stopped at entry 1, byte %d", verdict, in.Stop, want)
			}
		})
	}
	for _, har := range []string{whole, whole + " \r\n\t", `{"log": {"entries": [` + harOK(0) + `], "pages": [], "x": {"entries": 1}}, "y": 2}`} {
		if verdict, in := verdictOf(t, func(add func(*Call)) (Input, error) { return ReadHAR(strings.NewReader(har), add) }); verdict != Green || !in.Complete() {
			t.Errorf("%s: verdict %s, %+v; want green, read whole", har, verdict, in)
		}
	}
}

// TestHARStatusRead: an answer's status is 0 (no answer, as browsers
// record one), left out, or an integer from 100 to 999 (written as a JSON
// number, 429.0 and 4.29e2 too); anything else (the string "429", a number
// out of range, an array, a fraction, null) makes the entry a problem, so
// the trace is incomplete, never yellow on 429s read as 0. Before, each
// read as 0, unsaid.
func TestHARStatusRead(t *testing.T) {
	red := harHead + har429(1, "") + ",\n" + har429(2, "") + "]}}"
	for _, tt := range []struct {
		status, verdict string
	}{
		{`429`, Red}, {`429.0`, Red}, {`4.29e2`, Red},
		{`"429"`, Incomplete}, {`429e400`, Incomplete}, {`[429]`, Incomplete}, {`429.5`, Incomplete}, {`65965`, Incomplete},
		{`-429`, Incomplete}, {`null`, Incomplete}, {`99`, Incomplete},
	} {
		t.Run(tt.status, func(t *testing.T) {
			har := strings.ReplaceAll(red, `"status": 429`, `"status": `+tt.status)
			verdict, in := verdictOf(t, func(add func(*Call)) (Input, error) { return ReadHAR(strings.NewReader(har), add) })
			if verdict != tt.verdict || tt.verdict == Incomplete && (len(in.Problems) == 0 || in.Problems[0].Index != 0) {
				t.Errorf("verdict %s, problems %v; want %s", verdict, in.Problems, tt.verdict)
			}
		})
	}
	none := strings.ReplaceAll(red, `"status": 429`, `"status": 0`)
	if verdict, in := verdictOf(t, func(add func(*Call)) (Input, error) { return ReadHAR(strings.NewReader(none), add) }); verdict == Incomplete || !in.Complete() {
		t.Errorf("status 0: verdict %s, %+v; want read whole", verdict, in)
	}
}

// TestHARHeaderReadWhole: a header object is read as JSON.parse reads it,
// its last "name" and last "value" counting, whatever their order, and
// only once the object is read whole: a token placed before two names
// ({"value": TOKEN, "name": "User-Agent", "name": "Authorization"}) is the
// Authorization header, redacted; a second "value" replaces the first. A
// field of an entry named twice ("request", "status"...) makes the entry
// a problem: readers differ on which one counts. Before, the token was
// kept unredacted as the call's User-Agent.
func TestHARHeaderReadWhole(t *testing.T) {
	const token = "XBL3.0 x=1;eyJTHE-SECRET-TOKEN"
	entry := func(headers string) string {
		return harHead + `{"startedDateTime": "2026-03-01T20:00:00Z", "request": {"method": "GET", "url": "https://social.xboxlive.com/users/me/people",
			"headers": [` + headers + `]}, "response": {"status": 200}}]}}`
	}
	tests := []struct {
		name, headers string
		auth, agent   string
	}{
		{"a value before two names", `{"value": "` + token + `", "name": "User-Agent", "name": "Authorization"}`, "XBL3.0 x=1;REDACTED", ""},
		{"two values", `{"name": "Authorization", "value": "` + token + `", "value": "XBL3.0 x=2;t"}`, "XBL3.0 x=2;REDACTED", ""},
		{"the last name a number", `{"name": "User-Agent", "value": "` + token + `", "name": 5}`, "", ""},
		{"the last value a number", `{"name": "User-Agent", "value": "game", "value": 5}`, "", ""},
		{"names in any case", `{"name": "user-agent", "value": "game"}, {"value": "XBL3.0 x=3;t", "name": "AUTHORIZATION"}`, "XBL3.0 x=3;REDACTED", "game"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls, in, err := readHAR(t, entry(tt.headers))
			if err != nil || len(calls) != 1 || !in.Complete() {
				t.Fatalf("%v, %d calls, %+v", err, len(calls), in)
			}
			if s := fmt.Sprintf("%+v", calls[0]); strings.Contains(s, "SECRET-TOKEN") {
				t.Errorf("the call holds the token: %s", s)
			}
			if got := [2]string{calls[0].Authorization, calls[0].UserAgent}; got != [2]string{tt.auth, tt.agent} {
				t.Errorf("Authorization, User-Agent %q, want %q", got, [2]string{tt.auth, tt.agent})
			}
		})
	}
	for _, entry := range []string{
		strings.Replace(harOK(0), `"request"`, `"request": {"method": "GET"}, "request"`, 1),
		strings.Replace(harOK(0), `"status": 200`, `"status": 200, "status": 200`, 1),
	} {
		_, in, err := readHAR(t, harHead+entry+"]}}")
		if err != nil || in.Calls != 0 || len(in.Problems) != 1 || !strings.Contains(in.Problems[0].Reason, "twice") {
			t.Errorf("%s: %v, %+v; want the entry a problem", entry, err, in)
		}
	}
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
