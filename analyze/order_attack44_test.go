package analyze_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/xblgo/fgrl/analyze"
)

// held: the verdict does not depend on the order of a HAR's entries.
// Promise (analyze doc): "throttled-calls: ... any call sent after a 429's
// answer arrived and before its Retry-After had passed, to the
// millisecond ... fail" — with the entries written out of time order
// (the call that ignored the Retry-After listed before the 429), the
// verdict must still be red, in JSON, JUnit and SARIF alike.
func TestAttack44OutOfOrderEntriesStillRed(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	entry := func(at time.Duration, status int, ra string) string {
		return fmt.Sprintf(`{"startedDateTime":%q,"time":10,"request":{"method":"GET","url":"https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag","headers":[{"name":"Authorization","value":"XBL3.0 x=123;tok"}]},"response":{"status":%d,"headers":[{"name":"Retry-After","value":%q}]}}`,
			t0.Add(at).Format(time.RFC3339Nano), status, ra)
	}
	var b bytes.Buffer
	b.WriteString(`{"log":{"version":"1.2","entries":[`)
	b.WriteString(entry(5*time.Second, 200, "") + ",") // sent 5 s into a 60 s Retry-After
	b.WriteString(entry(0, 429, "60"))
	b.WriteString(`]}}`)
	rep := attack44Report(t, func(add func(*analyze.Call)) (analyze.Input, error) { return analyze.ReadHAR(&b, add) })
	if rep.Verdict != analyze.Red {
		t.Fatalf("verdict %s, want red (findings %+v)", rep.Verdict, rep.Findings)
	}
	var j, s bytes.Buffer
	rep.WriteJUnit(&j)
	rep.WriteSARIF(&s)
	if !bytes.Contains(j.Bytes(), []byte("<failure")) || !bytes.Contains(s.Bytes(), []byte(`"level": "error"`)) && !bytes.Contains(s.Bytes(), []byte(`"level":"error"`)) {
		t.Errorf("JUnit or SARIF disagree with the red verdict:\n%s\n%s", j.String(), s.String())
	}
}

// held: a 429 status written as a JSON number in another form (4.29e2,
// 429.0, 4290e-1: JSON.parse reads each as 429) is never read as a
// success: the verdict is not green (it is read as the 429, or the entry
// is a problem). Promise (ReadHAR): "whose status is neither 0 ... nor an
// integer from 100 to 999 ... is skipped and named in Input.Problems ...
// Either way the trace is not Complete."
func TestAttack44StatusOtherNumberFormsNotGreen(t *testing.T) {
	for _, st := range []string{"4.29e2", "429.0", "4290e-1", "429e0", "1e400"} {
		har := `{"log":{"version":"1.2","entries":[{"startedDateTime":"2026-03-01T20:00:00Z","time":5,"request":{"method":"GET","url":"https://profile.xboxlive.com/users/me/profile/settings","headers":[{"name":"Authorization","value":"XBL3.0 x=123;tok"}]},"response":{"status":` + st + `,"headers":[]}}]}}`
		rep := attack44Report(t, func(add func(*analyze.Call)) (analyze.Input, error) {
			return analyze.ReadHAR(bytes.NewReader([]byte(har)), add)
		})
		if rep.Verdict == analyze.Green {
			t.Errorf("status %s: verdict %s, complete %v", st, rep.Verdict, rep.Inputs[0].Complete())
		}
	}
}
