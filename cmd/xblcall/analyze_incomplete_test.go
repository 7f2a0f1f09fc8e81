package main

import (
	"strings"
	"testing"

	"github.com/xblgo/fgrl/analyze"
	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/whatif"
)

// TestWhatIfTextNamesIncompleteAfter: a third outside attack on the
// what-if. Past whatif.MaxURLBytes the verdict after is incomplete, the
// reason an input of its own, "what-if replay", which the JSON lists
// (after.inputs); the text printed the traces' gaps alone, so it said
// "incomplete with fgrl" and never why. The text says what the JSON says.
func TestWhatIfTextNamesIncompleteAfter(t *testing.T) {
	t.Parallel()
	trace := analyze.Input{Name: "a.har", Calls: 10}
	replayed := analyze.Input{Name: "what-if replay", ProblemCount: 4, Problems: []analyze.Problem{{Index: 6, Offset: -1,
		Reason: "4 calls replayed without their query or request body, past 256 MiB of distinct requests"}}}
	res := &whatif.Result{Calls: 10, Served: 10,
		Before: &analyze.Report{Verdict: analyze.Green, Calls: 10, Inputs: []analyze.Input{trace}},
		After:  &analyze.Report{Verdict: analyze.Incomplete, Calls: 10, Inputs: []analyze.Input{trace, replayed}}}
	var b strings.Builder
	if err := printWhatIf(&b, res, limits.Default()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "replayed without their query or request body") {
		t.Errorf("the verdict after is incomplete, the text does not say why:\n%s", b.String())
	}
}
