package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	flag "github.com/spf13/pflag"

	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/limits"
)

func limitsCommand(e *env) *cobra.Command {
	o := new(limitsOpts)
	c := &cobra.Command{
		Use:   "limits",
		Short: "print the FGRL limits table",
		Example: `  xblcall limits
  xblcall limits --revision 2022 --json
  xblcall limits --file examples/limits.json --wide    # a limits file in the repository

BURST is per 15 s and SUSTAIN per 300 s, per user + title; PUB is the Store
services' second sustain limit, per user + publisher; CERT is the calls per
300 s at which a title fails certification. The table fits 100 columns,
showing each rule's first host and path; --wide or --json shows them all.
`,
		RunE: runE(e, o.run),
	}
	c.Flags().AddFlagSet(limitsFlags(o))
	complete(c, map[string][]string{"revision": limits.Revisions()}, map[string][]string{"file": {"json"}}, nil)
	c.AddCommand(planCommand(e))
	return c
}

func planCommand(e *env) *cobra.Command {
	o := new(planOpts)
	c := &cobra.Command{
		Use:   "plan SCOPE:EVERY[:COUNT]...",
		Short: "plan periodic calls: each scope's busiest windows, what is left of its limits, its fastest safe interval",
		Example: `  xblcall limits plan social:10s                   # exactly the sustain limit: nothing left
  xblcall limits plan presence/read:10s:3 profile:1m    # three lookups a tick: batch them

A periodic call is a rule's scope (xblcall limits lists them), an interval
and the calls of a tick (one user's). For each scope the planner counts the
calls in the busiest 15 s and 300 s windows (windows start at a request, as
the service's do), what is left of each limit (0: one more call is a 429),
the fastest safe interval for the calls of a tick, and whether a batch call
could carry them. Where the Real-Time Activity service pushes a scope's
changes (presence/read, social, mpsd), it says to subscribe instead: no
polling at all (xblcall watch presence; client.User.Subscribe). Exit
status 1 when a scope is over its limits.
`,
		RunE: runE(e, o.run),
	}
	c.Flags().AddFlagSet(planFlags(o))
	complete(c, map[string][]string{"revision": limits.Revisions()}, map[string][]string{"file": {"json"}}, nil)
	return c
}

type planOpts struct{ revision, file string }

func planFlags(o *planOpts) *flag.FlagSet {
	fs := newFlagSet("plan")
	fs.StringVar(&o.revision, "revision", "2020", "built-in limits table")
	fs.StringVar(&o.file, "file", "", "limits data file")
	return fs
}

func (o *planOpts) run(_ context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return &exitError{2, errors.New("name the periodic calls: SCOPE:EVERY[:COUNT], such as social:10s")}
	}
	l, err := loadLimits(o.revision, o.file)
	if err != nil {
		return err
	}
	var calls []limits.PeriodicCall
	for _, a := range args {
		c, err := parsePeriodic(a)
		if err != nil {
			return &exitError{2, err}
		}
		calls = append(calls, c)
	}
	rows, err := l.Plan(calls)
	if err != nil {
		return &exitError{2, err}
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SCOPE\tA TICK\tEVERY\tBURST (15 s)\tSUSTAIN (300 s)\tFASTEST SAFE\tVERDICT")
	over := false
	for _, r := range rows {
		every := "mixed"
		if r.Every > 0 {
			every = r.Every.String()
		}
		fastest := "none: more calls a tick than a limit"
		if r.Fastest > 0 {
			fastest = r.Fastest.String()
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d/%d\t%d/%d\t%s\t%s\n", r.Scope, r.PerTick, every, r.BurstPeak, r.Burst, r.SustainPeak, r.Sustain, fastest, verdict(r))
		over = over || !r.Safe()
	}
	tw.Flush()
	if over {
		return &exitError{1, errors.New("a scope's periodic calls are over its limits")}
	}
	return nil
}

// verdict says a plan row in words.
func verdict(r limits.PlanRow) string {
	v := "ok"
	switch left := min(r.BurstLeft, r.SustainLeft); {
	case left < 0:
		v = fmt.Sprintf("over: %d calls too many", -left)
	case left == 0:
		v = "at a limit: one more call is a 429"
	}
	if r.Batch {
		v += "; batch the calls of a tick"
	}
	if r.Subscription != "" {
		v += "; better: subscribe (real-time activity), no polling"
	}
	return v
}

// parsePeriodic reads SCOPE:EVERY[:COUNT]; limits.Plan checks the values
// against its bounds, which the syntax error names too.
func parsePeriodic(s string) (limits.PeriodicCall, error) {
	bad := fmt.Errorf("%s: want SCOPE:EVERY[:COUNT], EVERY %v to %v and COUNT 1 to %d, such as social:10s or presence/read:5s:3",
		safetext.Quote(s, 60), limits.MinPlanInterval, limits.MaxPlanInterval, limits.MaxPlanCount)
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return limits.PeriodicCall{}, bad
	}
	every, err := time.ParseDuration(parts[1])
	if err != nil {
		return limits.PeriodicCall{}, bad
	}
	c := limits.PeriodicCall{Scope: parts[0], Every: every, Count: 1}
	if len(parts) == 3 {
		if c.Count, err = strconv.Atoi(parts[2]); err != nil {
			return limits.PeriodicCall{}, bad
		}
	}
	return c, nil
}

type limitsOpts struct {
	json     bool
	wide     bool
	revision string
	file     string
}

func limitsFlags(o *limitsOpts) *flag.FlagSet {
	fs := newFlagSet("limits")
	fs.BoolVar(&o.json, "json", false, "print the limits data as JSON")
	fs.BoolVar(&o.wide, "wide", false, "print every host and path (the table is cut to 100 columns otherwise)")
	fs.StringVar(&o.revision, "revision", "2020", "built-in table: "+strings.Join(limits.Revisions(), " or "))
	fs.StringVar(&o.file, "file", "", "read the limits from this JSON file instead")
	return fs
}

// loadLimits returns the limits a command was asked for.
func loadLimits(revision, file string) (*limits.Limits, error) {
	if file != "" {
		return limits.Load(file)
	}
	return limits.Revision(revision)
}

func (o *limitsOpts) run(_ context.Context, e *env, args []string) error {
	if len(args) > 0 {
		return &exitError{2, fmt.Errorf("unknown command %q: limits takes no arguments but its command plan (run xblcall help limits)", safetext.Clip(args[0], 40))}
	}
	l, err := loadLimits(o.revision, o.file)
	if err != nil {
		return err
	}
	if o.json {
		return printJSON(e.stdout, struct {
			Revision string        `json:"revision"`
			Source   string        `json:"source,omitempty"`
			Fallback *limits.Rule  `json:"fallback,omitempty"`
			Rules    []limits.Rule `json:"rules"`
		}{l.Revision, l.Source, l.Fallback, l.Rules})
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "revision %s: burst per 15 s, sustain per 300 s, per user + title\n", l.Revision)
	fmt.Fprintln(tw, "SCOPE\tHOSTS\tREQUESTS\tBURST\tSUSTAIN\tPUB\tCERT")
	for _, r := range l.Rules {
		hosts, reqs := strings.Join(r.Hosts, ","), requests(&r)
		if !o.wide {
			hosts, reqs = firstOf(r.Hosts, 24), safetext.Clip(reqs, 20)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%d\n", safetext.Clip(r.Scope(), 24), hosts, reqs,
			r.Burst, r.Sustain, dash(r.PublisherSustain), r.CertificationLimit())
	}
	if f := l.Fallback; f != nil {
		fmt.Fprintf(tw, "(other hosts)\t*\tany\t%d\t%d\t-\t%d\n", f.Burst, f.Sustain, f.CertificationLimit())
	}
	return tw.Flush()
}

func requests(r *limits.Rule) string {
	m, p := "any", ""
	if len(r.Methods) > 0 {
		m = strings.Join(r.Methods, "|")
	}
	if len(r.Paths) > 0 {
		p = " " + strings.Join(r.Paths, " ")
	}
	if r.Named {
		p += " (when named)"
	}
	return m + p
}

// firstOf shows the first of list, and how many more there are, within n
// bytes.
func firstOf(list []string, n int) string {
	if len(list) == 0 {
		return "any"
	}
	more := ""
	if len(list) > 1 {
		more = fmt.Sprintf(" +%d", len(list)-1)
	}
	return safetext.Clip(list[0], n-len(more)) + more
}

func dash(n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprint(n)
}
