package analyze

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/xblgo/fgrl/datafile"
)

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
