package analyze_test

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/analyze"
)

// attack3FileTime is t as a JSON data file's ReqTimeUTC: a Windows file time's
// 64 bits written as a double's.
func attack3FileTime(t time.Time) string {
	ft := uint64(t.UnixNano()/100) + 116444736000000000
	return strconv.FormatFloat(math.Float64frombits(ft), 'g', -1, 64)
}

// attack3DataCall is a JSON data file's call by XboxUserId 1 at t, its fields
// extra after HttpStatusCode status.
func attack3DataCall(t time.Time, status int, extra string) string {
	return fmt.Sprintf(`{"Uri": "https://profile.xboxlive.com/users/me/profile/settings", "XboxUserId": "1", "HttpStatusCode": %d%s, "ReqTimeUTC": %s, "IsGet": true}`,
		status, extra, attack3FileTime(t))
}

func attack3AnalyzeData(t *testing.T, text string) (*analyze.Report, analyze.Input) {
	t.Helper()
	a, err := analyze.New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	in, err := analyze.ReadData(strings.NewReader(text), a.Add)
	if err != nil {
		t.Fatalf("ReadData: %v", err)
	}
	in.Name = "atk.json"
	a.AddInput(in)
	return a.Report(), in
}

// TestAttack3DataJSONFieldFoldedAsJsonNET: analyze/datajson.go:165-166 "The
// fields of a JSON call, by the logger's names, which are matched in any
// case (as the trace analyzer's Json.NET matches them)", and the HAR
// reader's own rule (harentry.go skip: a key that is a field's name "in
// another case (or Unicode folding)" makes the entry a problem, since
// readers differ). Json.NET matches a property not found exactly with
// StringComparison.OrdinalIgnoreCase (JsonPropertyCollection
// .GetClosestMatchProperty), which upper-cases each char invariantly: 'ſ'
// (U+017F) reads as 'S', 'ı' (U+0131) as 'I', and the last of a repeated
// property counts. A call {"HttpStatusCode": 200, "HttpStatuſCode": 429}
// is a 429 to the trace analyzer; this reader matches names in ASCII case
// only and reads a 200, read whole: two such calls are green, not red or
// incomplete. (Since TestAtkOneByteInARequiredKeyNeverYellow, a name
// given twice with two values makes the call a problem, in ASCII case too;
// the names are still folded: HTTPSTATUSCODE repeating the status counts.)
func TestAttack3DataJSONFieldFoldedAsJsonNET(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	doc := func(extra string, status int) string {
		return `[{"Endpoint": "profile.xboxlive.com", "Calls": [` + attack3DataCall(t0, status, extra) + ", " + attack3DataCall(t0.Add(time.Second), status, extra) + `]}]`
	}
	if rep, _ := attack3AnalyzeData(t, doc(`, "HTTPSTATUSCODE": 429`, 429)); rep.Verdict != analyze.Red {
		t.Fatalf("control: HttpStatusCode 429 then HTTPSTATUSCODE 429: verdict %s, want red", rep.Verdict)
	}
	for _, key := range []string{"HttpStatuſCode", "Httpſtatuscode", "HTTPSTATUSCODE"} {
		rep, in := attack3AnalyzeData(t, doc(fmt.Sprintf(`, %q: 429`, key), 200))
		if rep.Verdict == analyze.Green || rep.Verdict == analyze.Yellow {
			t.Errorf("HttpStatusCode 200 then %q 429 on two calls: verdict %s, complete %v; want red or incomplete", key, rep.Verdict, in.Complete())
		}
	}
}
