package mock

import (
	"errors"
	"strings"
	"testing"

	"github.com/xblgo/fgrl/datafile"
)

// TestAttack67WorldAchievementIDLine: a world file whose title lists
// achievement "1" (line 6) and then "1.5" (line 7), the commit's own
// example of a key holding a dot: the check refuses "1.5", naming
// "accounts[0].titles[0].achievements.1.5", and the error is given line
// 6, the line of achievement "1", which is valid. YAML and JSON alike.
//
// Promised (mock.ReadWorld): "What is wrong is a *datafile.Error naming
// the line and field."; (datafile package doc, step 3) "what it finds
// names a field, and is given the line that field is on."
func TestAttack67WorldAchievementIDLine(t *testing.T) {
	for form, in := range map[string]string{
		"yaml": "accounts:\n  - xuid: \"2533274790395904\"\n    titles:\n      - titleId: \"1717113201\"\n        achievements:\n          \"1\": 50\n          \"1.5\": 10\n",
		"json": "{\"accounts\": [\n {\"xuid\": \"2533274790395904\",\n  \"titles\": [\n   {\"titleId\": \"1717113201\",\n    \"achievements\": {\n     \"1\": 50,\n     \"1.5\": 10}}]}]}",
	} {
		_, err := ReadWorld(strings.NewReader(in))
		var e *datafile.Error
		if !errors.As(err, &e) {
			t.Fatalf("%s: %v, want a *datafile.Error", form, err)
		}
		if e.Field != "accounts[0].titles[0].achievements.1.5" {
			t.Fatalf("%s: %v: field %q", form, e, e.Field)
		}
		if e.Line != 7 {
			t.Errorf("%s: achievement 1.5 on line 7: %v: line %d", form, e, e.Line)
		}
	}
}
