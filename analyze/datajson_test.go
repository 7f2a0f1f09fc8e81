package analyze

import (
	"strings"
	"testing"
)

// TestDataJSONEveryCallRead: an endpoint's first member names it; one that
// is no string (the endpoint's calls, or a call, where its name belongs)
// is a problem, and data after the array of endpoints (a second document,
// which Json.NET's JsonConvert, Python's json and JSON.parse refuse)
// stops reading there: the calls they hold leave the trace incomplete,
// never green. Before, the first member was taken for the name whatever
// it held, and reading ended at the array's end: green, read whole.
func TestDataJSONEveryCallRead(t *testing.T) {
	ok := `{"Endpoint": "profile.xboxlive.com", "Calls": [` + jsonDataCall(0, 200) + "]}"
	red := `[` + jsonDataCall(1, 429) + ", " + jsonDataCall(2, 429) + "]"
	one := `[` + ok + `, {"Call": `
	second := `[` + ok + `] `
	tests := []struct {
		name, data string
		at         int // where the gap is
		stop       bool
	}{
		{"calls as an endpoint's first member", `[` + ok + `, {"Calls": ` + red + `}]`, len(`[` + ok + `, {"Calls": `), false},
		{"a single call as the first member", one + jsonDataCall(1, 429) + `, "Again": ` + jsonDataCall(2, 429) + `}]`, len(one), false},
		{"a second document", second + `[{"Endpoint": "profile.xboxlive.com", "Calls": ` + red + `}]`, len(second), true},
		{"garbage after the array", second + `]`, len(second), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			verdict, in := verdictOf(t, func(add func(*Call)) (Input, error) { return ReadData(strings.NewReader(tt.data), add) })
			gap := in.Gap()
			if verdict != Incomplete || gap == nil || gap.Index != 1 || gap.Offset != int64(tt.at) || (in.Stop != nil) != tt.stop {
				t.Errorf("verdict %s, gap %v, stop %v; want incomplete at entry 1, byte %d", verdict, gap, in.Stop, tt.at)
			}
		})
	}
	if verdict, in := verdictOf(t, func(add func(*Call)) (Input, error) { return ReadData(strings.NewReader("["+ok+"]\r\n "), add) }); verdict != Green || !in.Complete() {
		t.Errorf("white space after the array: verdict %s, %+v; want green, read whole", verdict, in)
	}
}
