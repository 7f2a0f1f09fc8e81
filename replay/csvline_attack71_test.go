package replay_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/xblgo/fgrl/datafile"
	"github.com/xblgo/fgrl/replay"
)

const attack71XUID = "2533274790395904"

func attack71PatternErr(t *testing.T, in string) *datafile.Error {
	t.Helper()
	_, err := replay.ReadPattern(strings.NewReader(in))
	var e *datafile.Error
	if !errors.As(err, &e) {
		t.Fatalf("%q: %v, want a *datafile.Error", in, err)
	}
	return e
}

// held: for every field kind (time, service, user, count, spread,
// priority) and every way it can be wrong (not a number, out of range,
// empty, not an XUID, not interactive or background), the error names the
// faulty field's own line when each field before it is quoted and holds
// line breaks (LF, CRLF, bare CR, several), and when a record before it
// spans lines. Promised (replay.ReadPattern): "What is wrong is a
// *datafile.Error naming the line and the field."; (datafile.Error.Line)
// "from 1 (a bare CR, a LF or a CRLF ends a line)".
func TestAttack71PatternCSVEveryFieldOwnLine(t *testing.T) {
	good := []string{"0", "profile", attack71XUID, "1", "0", "background"}
	bad := map[string][]string{
		"time":     {"zz", "-1", "999999999"},
		"service":  {""},
		"user":     {"012", "x"},
		"count":    {"zz", "0", "99999999"},
		"spread":   {"zz", "-1"},
		"priority": {"later"},
	}
	names := []string{"time", "service", "user", "count", "spread", "priority"}
	for _, br := range []string{"\n", "\r\n", "\r", "\n\r\n\r"} {
		perBreak := strings.Count(br, "\n") + strings.Count(br, "\r") - strings.Count(br, "\r\n")
		for fi, name := range names {
			for _, v := range bad[name] {
				// a record spanning lines first, then the faulty one
				prev := "\"" + br + "0\",\"pro" + br + "file\"," + attack71XUID + ",1\n"
				rec := make([]string, 6)
				for j := range rec {
					switch {
					case j < fi:
						rec[j] = "\"" + br + good[j] + br + "\""
					case j == fi:
						rec[j] = v
						if v == "" {
							rec[j] = "\"\""
						}
					default:
						rec[j] = good[j]
					}
				}
				in := "time,service,user,count,spread,priority\n" + prev + strings.Join(rec, ",") + "\n"
				want := 2 + 2*perBreak + 1 + 2*perBreak*fi
				e := attack71PatternErr(t, in)
				if e.Field != name || e.Line != want {
					t.Errorf("%q: %v: field %q line %d, want %q line %d", in, e, e.Field, e.Line, name, want)
				}
			}
		}
	}
}

// TestAttack71PatternCSVBOMHeader: a CSV pattern saved with a UTF-8 byte order
// mark before its header line (as spreadsheet programs save "CSV UTF-8")
// is refused: the header is read as an event whose time is "\ufefftime",
// not a number.
//
// Promised (replay.ReadPattern): "CSV lines of
// time,service,user,count[,spread[,priority]] with an optional header
// line".
func TestAttack71PatternCSVBOMHeader(t *testing.T) {
	in := "\ufefftime,service,user,count\n0,profile," + attack71XUID + ",1\n"
	if _, err := replay.ReadPattern(strings.NewReader(in)); err != nil {
		t.Errorf("%q: %v", in, err)
	}
}
