package analyze_test

import (
	"strings"
	"testing"

	"github.com/xblgo/fgrl/analyze"
)

// TestAttackUnicodeFoldedNamesHeld (held): encoding/json matches names by
// Unicode simple folding, so "entrieſ" (U+017F) after the entries and
// "ſtatus" in an entry are read as "entries" and "status". The fix of the
// first attack folds them too: neither trace is read whole.
func TestAttackUnicodeFoldedNamesHeld(t *testing.T) {
	e := func(started string, status int) string {
		return anAtkEntry(started, "profile.xboxlive.com", "1", status)
	}
	hostile := map[string]string{
		"entrieſ after the entries": `{"log": {"entries": [` + e("2026-03-01T20:00:00Z", 200) + `], "entrieſ": [` +
			e("2026-03-01T20:00:00Z", 429) + `,` + e("2026-03-01T20:00:01Z", 429) + `]}}`,
		"ſtatus in an entry": anAtkHAR(strings.Replace(e("2026-03-01T20:00:00Z", 200), `"headers": []}}`, `"headers": [], "ſtatus": 429}}`, 1),
			strings.Replace(e("2026-03-01T20:00:01Z", 200), `"headers": []}}`, `"headers": [], "ſtatus": 429}}`, 1)),
	}
	for name, har := range hostile {
		rep, in := anAtkAnalyze(t, har)
		if in.Complete() || rep.Verdict != analyze.Incomplete {
			t.Errorf("%s: verdict %s, complete %v; want incomplete", name, rep.Verdict, in.Complete())
		}
	}
}
