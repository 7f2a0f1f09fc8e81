package analyze

import (
	"strings"
	"testing"
)

// The red traces below hold a green call and two 429s in a row (user 2):
// red when read whole.
func attack89RedTraces() map[string]string {
	return map[string]string{
		"har":       harHead + harOK(0) + ",\n" + har429(1, "") + ",\n" + har429(2, "") + "]}}",
		"data.csv":  csvHdr + csvLine(0, 200) + csvLine(1, 429) + csvLine(2, 429),
		"data.json": `[{"Endpoint": "profile.xboxlive.com", "Calls": [` + jsonDataCall(0, 200) + ", " + jsonDataCall(1, 429) + ", " + jsonDataCall(2, 429) + "]}]",
	}
}

func attack89Read(kind, s string) func(func(*Call)) (Input, error) {
	return func(add func(*Call)) (Input, error) {
		if kind == "har" {
			return ReadHAR(strings.NewReader(s), add)
		}
		return ReadData(strings.NewReader(s), add)
	}
}

// The package doc: "incomplete, whatever the calls read, when a trace was
// not read whole (Input.Complete): it ended or broke off inside an entry";
// ReadData: "a header line that spans lines stops reading at once". Every
// strict prefix of a red trace, cut at any byte, must be an error or
// incomplete (for CSV, but for the cuts at a row's end, which are whole
// files of fewer rows), never green, yellow or a red read whole. A CSV cut
// inside its header line, at a field's end, reads as a whole trace of no
// call: green.
func TestAttack89EveryCutFailsClosed(t *testing.T) {
	for kind, red := range attack89RedTraces() {
		if v, _ := verdictOf(t, attack89Read(kind, red)); v != Red {
			t.Fatalf("%s: control %s, want red", kind, v)
		}
		for n := 1; n < len(red); n++ {
			cut := red[:n]
			if kind == "data.csv" && (strings.HasSuffix(cut, "\n") || strings.HasSuffix(cut, `""`) && red[n] == '\n' || strings.HasPrefix(red[n:], "\"\"\n") || strings.HasPrefix(red[n:], "\"\n") || n == len(csvHdr)-1) {
				continue
			}
			v, in := verdictOf(t, attack89Read(kind, cut))
			if !strings.HasPrefix(v, "error") && (v != Incomplete || in.Complete()) {
				t.Errorf("%s cut at byte %d of %d (...%q): verdict %s, complete %v", kind, n, len(red), cut[max(0, n-20):], v, in.Complete())
			}
		}
	}
}

// held: a NUL byte put in place of any byte of a JSON trace (HAR, JSON
// data file) makes it no valid JSON (a control character in a string, or
// no token outside one): ReadHAR: "a file ... not valid JSON past some
// entry ... yields the calls before and Input.Stop. Either way the trace
// is not Complete". Never green, yellow or read whole.
func TestAttack89NULAnywhereFailsClosed(t *testing.T) {
	for kind, red := range attack89RedTraces() {
		if kind == "data.csv" {
			continue
		}
		for i := range len(red) {
			b := []byte(red)
			b[i] = 0
			v, in := verdictOf(t, attack89Read(kind, string(b)))
			if !strings.HasPrefix(v, "error") && (v == Green || v == Yellow || in.Complete()) {
				t.Errorf("%s with NUL at byte %d (%q): verdict %s, complete %v", kind, i, red[max(0, i-20):i+1], v, in.Complete())
			}
		}
	}
}

// A red trace changed at one byte in a key HAR 1.2 requires ("response",
// "status") or in the data file's "HttpStatusCode": the 429 loses its
// status and reads as a call without an answer. The package doc: the
// verdict is incomplete when a trace "held entries that could not be read
// as calls"; HAR 1.2 requires response and response.status. Here the
// damaged entry is read whole as "no answer": red turns yellow, complete.
func TestAttack89OneByteInARequiredKeyNeverYellow(t *testing.T) {
	reds := attack89RedTraces()
	first := func(s, old, new string) string { return strings.Replace(s, old, new, 1) }
	har := reds["har"]
	i := strings.Index(har, `"response": {"status": 429`)
	cases := []struct{ name, kind, trace string }{
		{"har \"response\" -> \"Xesponse\"", "har", har[:i+1] + "X" + har[i+2:]},
		{"har \"status\" -> \"Xtatus\"", "har", har[:i+14] + "X" + har[i+15:]},
		{"data.json \"HttpStatusCode\" -> \"XttpStatusCode\"", "data.json", first(reds["data.json"], `"HttpStatusCode": 429`, `"XttpStatusCode": 429`)},
		{"data.json \"HttpStatusCode\": 429, \"httpstatuscode\": 200 (the trace analyzer compares names exactly)", "data.json",
			first(reds["data.json"], `"HttpStatusCode": 429`, `"HttpStatusCode": 429, "httpstatuscode": 200`)},
	}
	for _, c := range cases {
		if c.trace == reds[c.kind] {
			t.Fatalf("%s: no change", c.name)
		}
		v, in := verdictOf(t, attack89Read(c.kind, c.trace))
		if v == Green || v == Yellow {
			t.Errorf("%s: verdict %s, complete %v, problems %v", c.name, v, in.Complete(), in.Problems)
		}
	}
}

// held: specific hostile spellings (BOM, CRLF, lone CR, header case, status
// spellings, escaped and repeated keys, an HTTP-date Retry-After, zones,
// leap seconds, header tricks naming another user): each leaves the trace
// red, incomplete or no trace (an error), never green or yellow.
func TestAttack89HostileSpellingsNeverGreen(t *testing.T) {
	reds := attack89RedTraces()
	har, csv, js := reds["har"], reds["data.csv"], reds["data.json"]
	cases := []struct{ name, kind, trace string }{
		{"har BOM", "har", "\ufeff" + har},
		{"har CRLF", "har", strings.ReplaceAll(har, "\n", "\r\n")},
		{"har lone CR", "har", strings.ReplaceAll(har, "\n", "\r")},
		{"har Retry-After header case", "har", strings.ReplaceAll(har, `"Retry-After"`, `"rEtRy-AfTeR"`)},
		{"har status as string", "har", strings.ReplaceAll(har, `"status": 429`, `"status": "429"`)},
		{"har status 429.0", "har", strings.ReplaceAll(har, `"status": 429`, `"status": 429.0`)},
		{"har status 4.29e2", "har", strings.ReplaceAll(har, `"status": 429`, `"status": 4.29e2`)},
		{"har status escaped key", "har", strings.ReplaceAll(har, `"status": 429`, `"st\u0061tus": 429`)},
		{"har second status", "har", strings.ReplaceAll(har, `"status": 429`, `"status": 429, "status": 200`)},
		{"har second status other case", "har", strings.ReplaceAll(har, `"status": 429`, `"status": 429, "Status": 200`)},
		{"har Retry-After date", "har", strings.ReplaceAll(har, `"value": "60"`, `"value": "Sun, 01 Mar 2026 20:01:00 GMT"`)},
		{"har started with offset +00:00", "har", strings.ReplaceAll(har, `:02Z"`, `:02+00:00"`)},
		{"har Authorization name in other case", "har", strings.ReplaceAll(har, `"name": "Authorization", "value": "XBL3.0 x=2;t"`, `"name": "AUTHORIZATION", "value": "XBL3.0 x=2;t"`)},
		{"har second user by X-Forwarded", "har", strings.Replace(har, `{"name": "Authorization", "value": "XBL3.0 x=2;t"}`, `{"name": "Authorization", "value": "XBL3.0 x=2;t"}, {"name": "x-xbl-user", "value": "3"}`, 1)},
		{"har userhash case", "har", strings.Replace(har, `"XBL3.0 x=2;t"`, `"xbl3.0 x=2;t"`, 1)},
		{"csv BOM", "data.csv", "\ufeff" + csv},
		{"csv CRLF", "data.csv", strings.ReplaceAll(csv, "\n", "\r\n")},
		{"csv mixed ends", "data.csv", strings.Replace(csv, "\n", "\r\n", 2)},
		{"csv lone CR", "data.csv", strings.ReplaceAll(csv, "\n", "\r")},
		{"csv Retry-After lower", "data.csv", strings.ReplaceAll(csv, "Retry-After: 60", "retry-after: 60")},
		{"csv status spaces", "data.csv", strings.ReplaceAll(csv, `"429"`, `" 429"`)},
		{"csv status 0429", "data.csv", strings.ReplaceAll(csv, `"429"`, `"0429"`)},
		{"csv NUL in body", "data.csv", strings.Replace(csv, `,"","Retry-After`, ",\"a\x00b\",\"Retry-After", -1)},
		{"csv leap second", "data.csv", strings.Replace(csv, "20:00:02.000Z", "23:59:60.000Z", 1)},
		{"json BOM", "data.json", "\ufeff" + js},
		{"json status string", "data.json", strings.ReplaceAll(js, `"HttpStatusCode": 429`, `"HttpStatusCode": "429"`)},
	}
	for _, c := range cases {
		if c.trace == reds[c.kind] {
			t.Errorf("%s: the change matched nothing", c.name)
			continue
		}
		v, in := verdictOf(t, attack89Read(c.kind, c.trace))
		if v == Green || v == Yellow {
			t.Errorf("%s: verdict %s, complete %v, problems %v", c.name, v, in.Complete(), in.Problems)
		} else {
			t.Logf("%s: %s (problems %d, stop %v)", c.name, v, in.ProblemCount, in.Stop != nil)
		}
	}
}
