package analyze

import (
	"fmt"
	"strings"
	"testing"
)

// TestCSVRowsOnOneLine: the logger writes each row on one line (a line
// break in a header or body written as a space: XSAPI's
// utils::escape_special_characters), so a quote left open that joins rows
// is caught however the joined row turns out: a header line that spans
// lines stops reading at once, naming byte 6 (after the version line); a
// row that does (its field opened lazily, "x" y, and closed in the same
// field of a later row, so the joined row has the header's fields) is a
// problem. Either way the 429s it swallows leave the trace incomplete,
// never green. A version line that spans lines is no data file. Before,
// the swallowed rows went unsaid: green, read whole.
func TestCSVRowsOnOneLine(t *testing.T) {
	bare := func(s, status int) string { // a row as the logger writes it, unquoted
		return fmt.Sprintf("profile.xboxlive.com,https://profile.xboxlive.com/users/me/profile/settings,2,,,,Retry-After: 60,,%d,80,2026-03-01T20:00:%02d.000Z,true,1,false,0,,false,,,0,,,\n", status, s)
	}
	open := strings.Replace(bare(0, 200), ",,,,Retry-After: 60", `,,,"x" y,Retry-After: 60`, 1) // field 5 opens a quote
	closing := strings.Replace(bare(3, 200), ",,,,Retry-After: 60", `,,,z",Retry-After: 60`, 1) // and field 5 closes it
	tests := []struct {
		name, csv    string
		entry, bytes int // where the first gap is
		stop         bool
	}{
		{"by the header", strings.Replace(csvHdr, `,"BreadCrumb"`, `,"BreadCrumb`, 1) + bare(1, 429) + bare(2, 429) + `z",` + bare(3, 200) + csvLine(4, 200),
			0, len("v1510\n"), true},
		{"by the header, to the end", strings.Replace(csvHdr, `,"BreadCrumb"`, `,"BreadCrumb`, 1) + bare(1, 429) + bare(2, 429), 0, len("v1510\n"), true},
		{"by a row, closed in the same field", csvHdr + open + bare(1, 429) + bare(2, 429) + closing, 0, len(csvHdr), false},
		{"a row with \\r\\n in a quoted field", csvHdr + strings.Replace(csvLine(0, 200), `"80"`, "\"8\r\n0\"", 1) + csvLine(1, 429) + csvLine(2, 429),
			0, len(csvHdr), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			verdict, in := verdictOf(t, func(add func(*Call)) (Input, error) { return ReadData(strings.NewReader(tt.csv), add) })
			gap := in.Gap()
			if verdict != Incomplete || gap == nil || gap.Index != tt.entry || gap.Offset != int64(tt.bytes) || (in.Stop != nil) != tt.stop {
				t.Errorf("verdict %s, gap %v, stop %v; want incomplete at entry %d, byte %d", verdict, gap, in.Stop, tt.entry, tt.bytes)
			}
		})
	}
	if _, err := ReadData(strings.NewReader("v1510,\"\n"+csvHdr[6:]+csvLine(0, 429)+"\"\n"), func(*Call) {}); err == nil || !strings.Contains(err.Error(), "version line") {
		t.Errorf("a version line spanning lines: %v; want no data file", err)
	}
}
