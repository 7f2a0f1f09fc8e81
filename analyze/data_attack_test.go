package analyze_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/analyze"
)

const an2CSVHeader = `"Host","Uri","XboxUserId","MultiplayerCorrelationId","RequestHeaders","RequestBody","ResponseHeaders","ResponseBody","HttpStatusCode","EllapsedCallTimeMs","ReqTimeUTC","IsGet","LoggerId","IsShoulderTap","ChangeNumber","SessionReferenceUriPath","IsInGameEvent","EventName","EventPlayerSessionId","EventVersion","EventDimensionData","EventMeasurementData","BreadCrumb"`

// an2Row is one logged GET of the profile settings by xuid at t.
func an2Row(xuid, reqHeaders, respHeaders string, status int, t time.Time) string {
	return fmt.Sprintf(`"profile.xboxlive.com","https://profile.xboxlive.com/users/me/profile/settings","%s","","%s","","%s","","%d","80","%s","true","1","false","0","","false","","","0","","",""`,
		xuid, reqHeaders, respHeaders, status, t.Format("2006-01-02T15:04:05.000Z"))
}

func an2AnalyzeData(t *testing.T, text string) (*analyze.Report, analyze.Input) {
	t.Helper()
	a, err := analyze.New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	in, err := analyze.ReadData(strings.NewReader(text), a.Add)
	if err != nil {
		t.Fatalf("ReadData: %v", err)
	}
	in.Name = "atk.csv"
	a.AddInput(in)
	return a.Report(), in
}

// TestAttackDataUserIsTheXboxUserId: ReadData's doc: "the user is the call's
// XboxUserId (the logs keep no token: an Authorization naming it stands
// in)". Two 429s in a row, both logged for XboxUserId 2533274791234567, are
// red. A RequestHeaders text naming another user in an Authorization header
// (x=1 on one row, x=2 on the other) makes the analyzer take that header
// for the user: one 429 each for two users, yellow, read whole.
func TestAttackDataUserIsTheXboxUserId(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	const xuid = "2533274791234567"
	control := "v1510\n" + an2CSVHeader + "\n" +
		an2Row(xuid, "User-Agent: XboxServicesAPI  ", "", 429, t0) + "\n" +
		an2Row(xuid, "User-Agent: XboxServicesAPI  ", "", 429, t0.Add(time.Second)) + "\n"
	if rep, in := an2AnalyzeData(t, control); rep.Verdict != analyze.Red || !in.Complete() {
		t.Fatalf("control: two 429s in a row of one XboxUserId: verdict %s, complete %v; want red, complete", rep.Verdict, in.Complete())
	}
	hostile := "v1510\n" + an2CSVHeader + "\n" +
		an2Row(xuid, "Authorization: XBL3.0 x=1;tok  User-Agent: XboxServicesAPI  ", "", 429, t0) + "\n" +
		an2Row(xuid, "Authorization: XBL3.0 x=2;tok  User-Agent: XboxServicesAPI  ", "", 429, t0.Add(time.Second)) + "\n"
	rep, in := an2AnalyzeData(t, hostile)
	t.Logf("verdict %s, complete %v, calls %d, problems %d", rep.Verdict, in.Complete(), in.Calls, in.ProblemCount)
	if an2Passes(rep.Verdict) {
		t.Errorf("two 429s in a row of XboxUserId %s, their RequestHeaders naming users 1 and 2: verdict %s, complete %v; want red (the user is the XboxUserId) or incomplete",
			xuid, rep.Verdict, in.Complete())
	}
}

// TestAttackDataTwoHeadersOfOneName: ReadData's problems are "as ReadHAR's",
// and ReadHAR makes two Authorization, User-Agent or Retry-After headers a
// problem ("readers differ on which one counts"). A logged answer's
// ResponseHeaders holding Retry-After: 1 and Retry-After: 30, before a call
// 2 s later: red by the second, yellow by the first, which the analyzer
// takes, reading the file whole.
func TestAttackDataTwoHeadersOfOneName(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	const xuid = "2533274791234567"
	control := "v1510\n" + an2CSVHeader + "\n" +
		an2Row(xuid, "User-Agent: XboxServicesAPI  ", "Retry-After: 30  ", 429, t0) + "\n" +
		an2Row(xuid, "User-Agent: XboxServicesAPI  ", "", 200, t0.Add(2*time.Second)) + "\n"
	if rep, in := an2AnalyzeData(t, control); rep.Verdict != analyze.Red || !in.Complete() {
		t.Fatalf("control: a call 2 s into a 429's Retry-After: 30: verdict %s, complete %v; want red, complete", rep.Verdict, in.Complete())
	}
	text := "v1510\n" + an2CSVHeader + "\n" +
		an2Row(xuid, "User-Agent: XboxServicesAPI  ", "Retry-After: 1  Retry-After: 30  ", 429, t0) + "\n" +
		an2Row(xuid, "User-Agent: XboxServicesAPI  ", "", 200, t0.Add(2*time.Second)) + "\n"
	rep, in := an2AnalyzeData(t, text)
	t.Logf("verdict %s, complete %v, calls %d, problems %d", rep.Verdict, in.Complete(), in.Calls, in.ProblemCount)
	if an2Passes(rep.Verdict) {
		t.Errorf("two Retry-After headers in a logged answer (1 and 30), the next call 2 s later: verdict %s, complete %v; want red or incomplete", rep.Verdict, in.Complete())
	}
}
