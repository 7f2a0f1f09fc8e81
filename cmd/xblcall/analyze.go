package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"text/tabwriter"

	flag "github.com/spf13/pflag"

	"github.com/xblgo/fgrl/internal/analyze"
	"github.com/xblgo/fgrl/internal/har"
	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/limits"
)

var analyzeCommand = command{
	summary: "find FGRL problems in an HTTP Archive (HAR) trace",
	usage:   "[--json] [--revision R] [--limits F] TRACE.har",
	examples: `  xblcall analyze capture.har
  xblcall analyze --json capture.har | jq '.groups[] | select(.verdict != "green")'

Calls are grouped per user (the Authorization userhash) and per rule of the
limits data. A sliding scan counts calls over the burst and sustain limits; a
sustain window at the certification figure (10 x sustain) is red and exits 2.
`,
	setup:    func() (*flag.FlagSet, runFunc) { o := new(analyzeOpts); return analyzeFlags(o), o.run },
	choices:  map[string][]string{"revision": limits.Revisions()},
	files:    map[string][]string{"limits": {"json"}},
	argFiles: []string{"har"},
}

type analyzeOpts struct {
	json             bool
	revision, limits string
}

func analyzeFlags(o *analyzeOpts) *flag.FlagSet {
	fs := newFlagSet("analyze")
	fs.BoolVar(&o.json, "json", false, "print the report as JSON")
	fs.StringVar(&o.revision, "revision", "2020", "built-in limits table")
	fs.StringVar(&o.limits, "limits", "", "limits data file")
	return fs
}

func (o *analyzeOpts) run(_ context.Context, e *env, args []string) error {
	if len(args) != 1 {
		return &exitError{2, errors.New("need one HAR file")}
	}
	limits, err := loadLimits(o.revision, o.limits)
	if err != nil {
		return err
	}
	f, err := os.Open(args[0])
	if err != nil {
		return err
	}
	defer f.Close()
	entries, err := har.Read(f)
	if err != nil {
		return err
	}
	rep := analyze.Analyze(entries, limits)
	if o.json {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else if err := printReport(e, len(entries), rep); err != nil {
		return err
	}
	if rep.Verdict == analyze.Red {
		return &exitError{2, errors.New("certification would fail (red)")}
	}
	return nil
}

func printReport(e *env, n int, rep analyze.Report) error {
	fmt.Fprintf(e.stdout, "%d calls, %d groups, %d skipped; verdict %s\n\n", n, len(rep.Groups), rep.Skipped, rep.Verdict)
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SCOPE\tUSER\tCALLS\tPEAK BURST\tBURST VIOL.\tPEAK SUSTAIN\tSUSTAIN VIOL.\t429s\tRETRIED TOO SOON\tVERDICT")
	for _, g := range rep.Groups {
		user := safetext.Clip(g.User, 40) // from the trace: never raw to a terminal
		if user == "" {
			user = "(no token)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d/%d\t%d\t%d/%d\t%d\t%d\t%d\t%s\n", g.Scope, user, g.Calls, g.PeakBurst, g.Burst,
			g.BurstViolations, g.PeakSustain, g.Sustain, g.SustainViolations, g.Server429s, g.RetriedTooSoon, g.Verdict)
	}
	return tw.Flush()
}
