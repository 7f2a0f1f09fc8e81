package analyze_test

// A fourth outside attack on the trace analyzer (atk-analyze4): JSON field
// names under Unicode folding (foldedName, since 6dce909).

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/analyze"
)

// attack4DataDoc4 is a JSON data file of two profile calls by one user a second
// apart, each {"HttpStatusCode": 200, key: 429}.
func attack4DataDoc4(key string) string {
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	call := func(t time.Time) string {
		ft := uint64(t.UnixNano()/100) + 116444736000000000
		return fmt.Sprintf(`{"Uri": "https://profile.xboxlive.com/users/me/profile/settings", "XboxUserId": "1", "HttpStatusCode": 200, %q: 429, "ReqTimeUTC": %s, "IsGet": true}`,
			key, strconv.FormatFloat(math.Float64frombits(ft), 'g', -1, 64))
	}
	return `[{"Endpoint": "profile.xboxlive.com", "Calls": [` + call(t0) + ", " + call(t0.Add(time.Second)) + `]}]`
}

// held: TestAttack4DataFoldedKeysHeldProbes: analyze/datajson.go:166-169 (a key
// that is a field's name only under Unicode folding makes the call a
// problem, since Json.NET reads it as the field) and RELIABILITY.md's third
// attack ("under Unicode folding or per-character upper-casing"). Json.NET
// matches with OrdinalIgnoreCase (per UTF-16 unit, upper-cased
// invariantly), encoding/json by per-rune unicode.ToUpper: 'ſ', 'ı' read
// as S and I, mixed with ASCII case; a full-width 'Ｈ' (U+FF28), a
// combining mark after 's', and 'ﬆ' (U+FB06, "st" only under full
// folding, two runes) read as no field: a 200, read whole, yellow.
func TestAttack4DataFoldedKeysHeldProbes(t *testing.T) {
	for _, c := range []struct {
		key     string
		problem bool
	}{
		{"HTTPſTATUSCODE", true},
		{"httpſtatuscode", true},
		{"ıSSHOULDERTAP", true}, // IsShoulderTap, per-character upper-cased
		{"ＨttpStatusCode", false},
		{"HttpStatus\u0307Code", false},
		{"Httpﬆatuscode", false},
		{"HttpStatusCodeſ", false},
	} {
		a, err := analyze.New(nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		in, err := analyze.ReadData(strings.NewReader(attack4DataDoc4(c.key)), a.Add)
		if err != nil {
			t.Fatalf("%q: %v", c.key, err)
		}
		a.AddInput(in)
		rep := a.Report()
		switch {
		case c.problem && (in.Complete() || rep.Verdict == analyze.Green || rep.Verdict == analyze.Yellow):
			t.Errorf("%q: complete %v, verdict %s; want a problem", c.key, in.Complete(), rep.Verdict)
		case !c.problem && (!in.Complete() || rep.Verdict != analyze.Yellow):
			t.Errorf("%q: complete %v (problems %v), verdict %s; want read whole, yellow (two 200s)", c.key, in.Complete(), in.Problems, rep.Verdict)
		}
	}
}
