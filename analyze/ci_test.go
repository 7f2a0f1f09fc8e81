package analyze

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// redReport is the analysis of a trace written for these tests,
// "capture.har": a title polling presence 40 times in 8 s and ignoring the
// 429s it gets (red), and looking profiles up one user at a time.
func redReport(t *testing.T) *Report {
	t.Helper()
	var tr trace
	for i := range 40 {
		status := 200
		if i >= 30 {
			status = 429
		}
		tr.add(float64(i)*0.2, "GET", "https://userpresence.xboxlive.com/users/xuid(2533274791234567)", "1", status).RetryAfter = "15"
	}
	for i := range 6 {
		tr.add(10+float64(i), "POST", "https://profile.xboxlive.com/users/batch/profile/settings", "1", 200).RequestBody = []byte(`{"userIds":["2533274790000001"],"settings":["Gamertag"]}`)
	}
	a, err := New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range tr {
		tr[i].Index = i
		a.Add(&tr[i])
	}
	a.AddInput(Input{Name: "capture.har", Calls: len(tr)})
	r := a.Report()
	if r.Fails == 0 || r.Warnings == 0 {
		t.Fatalf("%d failures, %d warnings; the tests want both", r.Fails, r.Warnings)
	}
	return r
}

// TestJUnitSchema: the JUnit report of a red trace validates against the
// JUnit schema CI systems read (testdata/schema/junit-10.xsd, with
// xmllint), holds a failure per failing finding and a skipped case per
// warning, each naming its XSAPI functions.
func TestJUnitSchema(t *testing.T) {
	r := redReport(t)
	var out bytes.Buffer
	if err := r.WriteJUnit(&out); err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	skipped := 0
	for _, s := range doc.Suites {
		skipped += s.Skipped
	}
	if doc.Failures != r.Fails || skipped != r.Warnings || len(doc.Suites) != len(RuleInfos) {
		t.Errorf("%d failures, %d skipped in %d suites; the report has %d failures, %d warnings, %d rules",
			doc.Failures, skipped, len(doc.Suites), r.Fails, r.Warnings, len(RuleInfos))
	}
	if !strings.Contains(out.String(), "XSAPI: XblPresenceGetPresenceAsync (presence_service::get_presence)") {
		t.Errorf("no finding names an XSAPI function:\n%.2000s", out.String())
	}
	validJUnit(t, out.Bytes())
}

// validJUnit fails t unless b validates against the JUnit schema
// (testdata/schema/junit-10.xsd, with xmllint; skipped without it).
func validJUnit(t *testing.T, b []byte) {
	t.Helper()
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		if os.Getenv("FGRL_REQUIRE_XMLLINT") != "" {
			t.Fatal("no xmllint on PATH and FGRL_REQUIRE_XMLLINT is set")
		}
		t.Skip("no xmllint on PATH (apt-get install libxml2-utils)")
	}
	file := filepath.Join(t.TempDir(), "report.xml")
	os.WriteFile(file, b, 0o600)
	if msg, err := exec.Command(xmllint, "--noout", "--schema", "testdata/schema/junit-10.xsd", file).CombinedOutput(); err != nil {
		t.Errorf("xmllint: %v\n%s", err, msg)
	}
	os.WriteFile(file, []byte(`<testsuites><testsuite name="x"/></testsuites>`), 0o600) // tests, failures, errors missing
	if exec.Command(xmllint, "--noout", "--schema", "testdata/schema/junit-10.xsd", file).Run() == nil {
		t.Error("xmllint accepts a suite without its required counts: it checks nothing")
	}
}

// TestSARIFSchema: the SARIF log of a red trace validates against the
// OASIS SARIF 2.1.0 schema (formats asserted), names every rule with its
// help, and has a result per finding, located in the trace, naming its
// XSAPI functions.
func TestSARIFSchema(t *testing.T) {
	r := redReport(t)
	var out bytes.Buffer
	if err := r.WriteSARIF(&out); err != nil {
		t.Fatal(err)
	}
	validSARIF(t, out.Bytes())
	var log sarifLog
	if err := json.Unmarshal(out.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	run := log.Runs[0]
	if len(run.Tool.Driver.Rules) != len(RuleInfos) || len(run.Results) != len(r.Findings) {
		t.Fatalf("%d rules, %d results; want %d and %d", len(run.Tool.Driver.Rules), len(run.Results), len(RuleInfos), len(r.Findings))
	}
	for _, res := range run.Results {
		if res.Locations[0].Physical == nil || res.Locations[0].Physical.Artifact.URI != "capture.har" ||
			!strings.Contains(res.Message.Text, "(XSAPI: Xbl") || run.Tool.Driver.Rules[res.RuleIndex].ID != res.RuleID {
			t.Errorf("result %+v: want it in capture.har, its rule at its index, naming its XSAPI functions", res)
		}
	}
}

// validSARIF fails t unless b validates against the OASIS SARIF 2.1.0
// schema (formats asserted).
func validSARIF(t *testing.T, b []byte) {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	sch, err := c.Compile("testdata/schema/sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(doc); err != nil {
		t.Errorf("the SARIF log does not validate: %v", err)
	}
	bad, _ := jsonschema.UnmarshalJSON(strings.NewReader(`{"version": "2.0.0", "runs": []}`))
	if sch.Validate(bad) == nil {
		t.Error("the schema accepts a log of version 2.0.0: it checks nothing")
	}
}

// TestIncompleteInEveryFormat: a report on a trace cut short, whose calls
// read are green, says so in every form: JSON (the verdict incomplete, the
// input's stop at its entry and byte), JUnit (an error, valid), SARIF (an
// error result at the byte and a run that did not succeed, valid), HTML (a
// banner). Before, only a warning in the text and HTML said it, and the
// verdict was green.
func TestIncompleteInEveryFormat(t *testing.T) {
	trace := harHead + harOK(0) + ",\n" + har429(1, "") + ",\n" + har429(2, "")
	trace = trace[:strings.LastIndex(trace, "Retry-After")] // entry 1 ends, entry 2 is cut
	where := fmt.Sprintf("entry 2 at byte %d", len(trace))
	a, _ := New(nil, nil)
	in, err := ReadHAR(strings.NewReader(trace), a.Add)
	if err != nil {
		t.Fatal(err)
	}
	in.Name = "capture.har"
	a.AddInput(in)
	rep := a.Report()
	b, _ := json.Marshal(rep)
	var doc struct {
		Verdict string
		Inputs  []struct{ Stop *place }
	}
	json.Unmarshal(b, &doc)
	if doc.Verdict != "incomplete" || doc.Inputs[0].Stop == nil || doc.Inputs[0].Stop.Index != 2 || doc.Inputs[0].Stop.Offset == nil || *doc.Inputs[0].Stop.Offset != int64(len(trace)) {
		t.Errorf("JSON: %s; want the verdict incomplete and the stop at %s", b, where)
	}
	var x bytes.Buffer
	rep.WriteJUnit(&x)
	if !regexp.MustCompile(`<error type="incomplete" message="`+where+`: the file ends inside entry 2">`).Match(x.Bytes()) ||
		!strings.Contains(x.String(), `errors="1"`) {
		t.Errorf("JUnit: no error naming %s:\n%s", where, x.String())
	}
	validJUnit(t, x.Bytes())
	x.Reset()
	rep.WriteSARIF(&x)
	type result struct {
		RuleID, Level string
		Locations     []struct {
			PhysicalLocation struct{ Region struct{ ByteOffset int } }
		}
	}
	var log struct {
		Runs []struct {
			Invocations []struct{ ExecutionSuccessful bool }
			Results     []result
		}
	}
	json.Unmarshal(x.Bytes(), &log)
	atGap := func(r result) bool {
		return r.RuleID == "incomplete-trace" && r.Level == "error" && r.Locations[0].PhysicalLocation.Region.ByteOffset == len(trace)
	}
	if len(log.Runs) != 1 || len(log.Runs[0].Invocations) != 1 || log.Runs[0].Invocations[0].ExecutionSuccessful ||
		!slices.ContainsFunc(log.Runs[0].Results, atGap) {
		t.Errorf("SARIF: no failed run and error result at byte %d:\n%s", len(trace), x.String())
	}
	validSARIF(t, x.Bytes())
	x.Reset()
	rep.WriteHTML(&x)
	if !regexp.MustCompile(`<div class="banner" id="incomplete">(.|\n)*capture.har: ` + where).Match(x.Bytes()) {
		t.Errorf("HTML: no banner naming %s", where)
	}
}
