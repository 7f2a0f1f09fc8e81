package whatif_test

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/xblgo/fgrl/analyze"
	"github.com/xblgo/fgrl/whatif"
)

var update = flag.Bool("update", false, "rewrite testdata/busy.json from this code")

// busyTrace is a trace written for this test, in no time order: 8 users
// over 6 minutes calling presence, a batch profile read and social in
// bursts that pass their limits (so fgrl delays and refuses calls), with
// 429s in the trace, one user calling at its own pace, calls at the same
// instant and calls not judged.
func busyTrace() []analyze.Call {
	urls := [...]string{"https://userpresence.xboxlive.com/users/xuid(2533274791234567)", "https://profile.xboxlive.com/users/batch/profile/settings",
		"https://social.xboxlive.com/users/me/people", "https://assets.example.com/a.png"}
	methods := [...]string{"GET", "POST", "GET", "GET"}
	var calls []analyze.Call
	for i := range 1200 {
		u := (i * 7) % 8
		k := (i / 3) % 4
		at := time.Duration(i/24)*7*time.Second + time.Duration(i%24)*time.Duration(u+1)*40*time.Millisecond // a burst of 24 calls every 7 s
		if u == 0 {
			at = time.Duration(i) * 397 * time.Millisecond // alone, and unhurried
		}
		c := analyze.Call{Time: t0.Add(at), Method: methods[k], URL: urls[k], Authorization: "XBL3.0 x=" + strconv.Itoa(u) + ";R", Status: 200}
		if k == 1 {
			c.RequestBody = []byte(`{"userIds":["1","2"],"settings":["Gamertag"]}`)
		}
		if i%41 == 0 {
			c.Status, c.RetryAfter = 429, "7"
		}
		calls = append(calls, c)
	}
	for i := range calls {
		calls[i].Index = i
	}
	return append(calls[len(calls)-200:], calls[:len(calls)-200]...) // in no time order: the last 200 calls first
}

// TestReplaySameOutput: the what-if of a busy trace, as JSON, is the one
// in testdata/busy.json, written by the replay before it kept 16 bytes a
// call and read its events in order (go test ./whatif -run
// TestReplaySameOutput -update rewrites it): how the replay keeps its calls
// changes no byte, and every run gives the same bytes, in one part or
// several replayed at once (each user's calls in one).
func TestReplaySameOutput(t *testing.T) {
	for _, parts := range []int{1, 2, 3, 8} {
		t.Run(strconv.Itoa(parts)+" parts", func(t *testing.T) {
			r, err := whatif.New(nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			whatif.SetParts(r, parts)
			calls := busyTrace()
			for i := range calls {
				r.Add(&calls[i])
			}
			r.AddInput(analyze.Input{Name: "busy.har", Calls: len(calls)})
			res, err := r.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.MarshalIndent(res, "", "\t")
			if err != nil {
				t.Fatal(err)
			}
			if *update && parts == 1 {
				if err := os.WriteFile("testdata/busy.json", append(got, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile("testdata/busy.json")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), string(got)+"\n"); diff != "" {
				t.Errorf("the what-if differs from testdata/busy.json (-want +got):\n%s", diff)
			}
		})
	}
}
