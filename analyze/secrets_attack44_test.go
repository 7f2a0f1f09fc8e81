package analyze_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/xblgo/fgrl/analyze"
)

// attack44Outputs renders every form a report takes (JSON, JUnit, SARIF,
// HTML) into one string.
func attack44Outputs(t *testing.T, rep *analyze.Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.NewEncoder(&b).Encode(rep); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteJUnit(&b); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteSARIF(&b); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func attack44Report(t *testing.T, read func(add func(*analyze.Call)) (analyze.Input, error)) *analyze.Report {
	t.Helper()
	a, err := analyze.New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	in, err := read(a.Add)
	if err != nil {
		t.Fatal(err)
	}
	in.Name = "trace"
	a.AddInput(in)
	return a.Report()
}

// Promise (README.md, analyze): "Tokens are never printed." A trace
// analyzer JSON data file whose call holds an Authorization value in a
// numeric field (a field shifted by an exporter) is a problem, and the
// problem's reason quotes the value: the token must still not reach the
// report.
func TestAttack44DataFieldTokenNotInProblemReason(t *testing.T) {
	const secret = "eyJhbGciOiJSUzI1NiJ9SeCrEt"
	data := `[{"Endpoint":"userpresence.xboxlive.com","Calls":[{"Uri":"https://userpresence.xboxlive.com/users/me","XboxUserId":"2533274791234567",` +
		`"HttpStatusCode":"XBL3.0 x=123;` + secret + `","ElapsedCallTimeMs":80,"ReqTimeUTC":1.5e-300,"IsGet":true}]}]`
	rep := attack44Report(t, func(add func(*analyze.Call)) (analyze.Input, error) {
		return analyze.ReadData(strings.NewReader(data), add)
	})
	if rep.Verdict != analyze.Incomplete {
		t.Logf("verdict %s (problems %v)", rep.Verdict, rep.Inputs)
	}
	out := attack44Outputs(t, rep)
	if i := strings.Index(out, secret[:12]); i >= 0 {
		t.Errorf("the token in a data file's field reaches the report (verdict %s): ...%s...", rep.Verdict, out[max(0, i-80):min(len(out), i+40)])
	}
}

// Same promise, CSV data file: a row whose HttpStatusCode field holds the
// request's Authorization value.
func TestAttack44DataCSVStatusTokenNotInProblemReason(t *testing.T) {
	const secret = "eyJhbGciOiJSUzI1NiJ9SeCrEt"
	head := `v1510` + "\n" + `"Host","Uri","XboxUserId","MultiplayerCorrelationId","RequestHeaders","RequestBody","ResponseHeaders","ResponseBody","HttpStatusCode","EllapsedCallTimeMs","ReqTimeUTC","IsGet"` + "\n"
	row := `"userpresence.xboxlive.com","https://userpresence.xboxlive.com/users/me","2533274791234567","","","","","","XBL3.0 x=123;` + secret + `","80","2026-03-01T20:00:00.000Z","true"` + "\n"
	rep := attack44Report(t, func(add func(*analyze.Call)) (analyze.Input, error) {
		return analyze.ReadData(strings.NewReader(head+row), add)
	})
	out := attack44Outputs(t, rep)
	if i := strings.Index(out, secret[:12]); i >= 0 {
		t.Errorf("the token in a CSV row's field reaches the report (verdict %s): ...%s...", rep.Verdict, out[max(0, i-80):min(len(out), i+40)])
	}
}

// Same promise, HAR: an entry whose startedDateTime holds the request's
// Authorization value is skipped, and the problem quotes the value.
func TestAttack44HARStartedTokenNotInProblemReason(t *testing.T) {
	const secret = "eyJhbGciOiJSUzI1NiJ9SeCrEt"
	har := `{"log":{"version":"1.2","entries":[{"startedDateTime":"XBL3.0 x=123;` + secret + `","time":5,"request":{"method":"GET","url":"https://userpresence.xboxlive.com/users/me","headers":[]},"response":{"status":200,"headers":[]}}]}}`
	rep := attack44Report(t, func(add func(*analyze.Call)) (analyze.Input, error) {
		return analyze.ReadHAR(strings.NewReader(har), add)
	})
	out := attack44Outputs(t, rep)
	if i := strings.Index(out, secret[:12]); i >= 0 {
		t.Errorf("the token in a HAR entry's startedDateTime reaches the report (verdict %s): ...%s...", rep.Verdict, out[max(0, i-80):min(len(out), i+40)])
	}
}
