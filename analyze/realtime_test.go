package analyze

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/xblgo/fgrl/limits"
)

// TestShoulderTapsNotJudged: a data file's shoulder taps (IsShoulderTap,
// the logger's 14th column and JSON field) are real-time activity, left
// out of the rules as XboxLiveTraceAnalyzer leaves them out
// (GatherFirstOrderStats, its excess-call checks): twenty taps of one
// user's profile host within a second make no finding, and count as
// real-time.
func TestShoulderTapsNotJudged(t *testing.T) {
	var csv, js strings.Builder
	csv.WriteString(csvHdr)
	js.WriteString(`[{"profile.xboxlive.com": "x"`)
	for i := range 20 {
		csv.WriteString(strings.Replace(csvLine(0, 200), `"1","false"`, `"1","true"`, 1))
		js.WriteString(`, "c` + string(rune('a'+i)) + `": ` + strings.Replace(jsonDataCall(0, 200), `"IsGet": true`, `"IsGet": true, "IsShoulderTap": "True"`, 1))
	}
	js.WriteString("}]")
	for name, in := range map[string]string{"csv": csv.String(), "json": js.String()} {
		a, err := New(limits.Default(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ReadData(strings.NewReader(in), a.Add); err != nil {
			t.Fatal(err)
		}
		rep := a.Report()
		if rep.Realtime != 20 || rep.Judged != 0 || len(rep.Findings) != 0 {
			t.Errorf("%s: realtime %d, judged %d, findings %d; want 20, 0, 0", name, rep.Realtime, rep.Judged, len(rep.Findings))
		}
	}
}

// TestHARWebSocketMessages: a HAR entry of an RTA connection with
// _webSocketMessages, as Chrome's HAR and the mock's export write them
// (mock.TestRTARecord), reads as
// one real-time socket and its messages, none judged.
func TestHARWebSocketMessages(t *testing.T) {
	har := `{"log":{"entries":[{"startedDateTime":"2026-03-01T20:00:00Z","time":5,
	  "request":{"method":"GET","url":"https://rta.xboxlive.com/connect","headers":[{"name":"Authorization","value":"XBL3.0 x=1;secret"}]},
	  "response":{"status":101},
	  "_webSocketMessages":[{"type":"send","time":1,"opcode":1,"data":"[1,1,\"x\"]"},{"type":"receive","time":1,"opcode":1,"data":"[1,1,0,1,null]"},
	    {"type":"receive","time":2,"opcode":1,"data":"[3,1,\"Scarlett:true\"]"}]}]}}`
	a, err := New(limits.Default(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var calls []Call
	if _, err := ReadHAR(strings.NewReader(har), func(c *Call) { calls = append(calls, *c); a.Add(c) }); err != nil {
		t.Fatal(err)
	}
	rep := a.Report()
	got := struct{ Calls, Messages, Realtime, RealtimeMessages, Judged int }{len(calls), calls[0].WebSocketMessages, rep.Realtime, rep.RealtimeMessages, rep.Judged}
	if diff := cmp.Diff(struct{ Calls, Messages, Realtime, RealtimeMessages, Judged int }{1, 3, 1, 3, 0}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
