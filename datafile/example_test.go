package datafile_test

import (
	"fmt"
	"strings"

	"github.com/xblgo/fgrl/datafile"
)

// A kind of file, its Go value and its check: the error names the line
// and the field, whether the decoder or the check found what is wrong.
func ExampleKind_Read() {
	type team struct {
		Players []string `json:"players"`
	}
	kind := datafile.Kind{Name: "team", MaxBytes: 1 << 20, Lists: map[string]int{"/players": 3}}
	for _, file := range []string{
		"players: [Ada, Bo]\n",
		"players:\n  - Ada\n  - Bo\ncoach: Cy\n",
		"{\"players\": [\"Ada\",\n \"\"]}",
		"players: [Ada, Bo, Cy,\n  Di]\n",
	} {
		var t team
		err := kind.Read(strings.NewReader(file), &t, func() error {
			for i, p := range t.Players {
				if p == "" {
					return &datafile.Error{Field: fmt.Sprintf("players[%d]", i), Reason: "a player has a name"}
				}
			}
			return nil
		})
		fmt.Println(t.Players, err)
	}
	// Output:
	// [Ada Bo] <nil>
	// [Ada Bo] team: line 4: coach: no such field
	// [Ada ] team: line 2: players[1]: a player has a name
	// [] team: line 2: players: more than 3 entries
}
