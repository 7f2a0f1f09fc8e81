package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	flag "github.com/spf13/pflag"

	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/throttle"
	"github.com/xblgo/fgrl/transport"
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
		Short: "plan periodic calls for the fgrl transport: each scope's busiest windows, what is left of its limits, its fastest interval",
		Example: `  xblcall limits plan social:10s                   # exit 1: a plain client's limit; fgrl's 1 s margin holds a call
  xblcall limits plan social:11s --json
  xblcall limits plan social:11.149s --limit-share 0.9   # as analyze --what-if replays: within 90 % of each limit
  xblcall limits plan presence/read:10s:3 profile:1m    # three lookups a tick: batch them
  xblcall limits plan profile:15s --background      # a background job leaves a quarter to interactive calls

A periodic call is a rule's scope (xblcall limits lists them), an interval
and the calls of a tick (one user's). The plan is for the fgrl transport
as its flags say (transport.Transport.PlanClient): its budget admits a
call only while the last 15 s and 300 s, each --margin longer, hold less
than the part of each limit it lets calls use (--limit-share; for
--background calls, less the share kept for interactive ones). For each
scope the planner counts the calls in those windows at their busiest
(windows start at a request, as the service's do), what is left of each
limit (0: one more call waits), the fastest interval at which the
transport sends every call at once (FGRL), the fastest a plain client
sends without a 429 (PLAIN), and whether a batch call could carry a tick's
calls. Where the Real-Time Activity service pushes a scope's changes
(presence/read, social, mpsd), it says to subscribe instead: no polling at
all (xblcall watch presence; client.User.Subscribe). --json prints the rows (durations as Go duration strings). Exit
status 1 when a scope's calls are more than the transport sends at once.
`,
		RunE: runE(e, o.run),
	}
	c.Flags().AddFlagSet(planFlags(o))
	complete(c, map[string][]string{"revision": limits.Revisions()}, map[string][]string{"file": {"json"}}, nil)
	return c
}

type planOpts struct {
	revision, file string
	json           bool
	margin         time.Duration
	share          float64
	background     bool
}

func planFlags(o *planOpts) *flag.FlagSet {
	fs := newFlagSet("plan")
	fs.StringVar(&o.revision, "revision", "2020", "built-in limits table")
	fs.StringVar(&o.file, "file", "", "limits data file")
	fs.BoolVar(&o.json, "json", false, "print the plan as JSON")
	fs.DurationVar(&o.margin, "margin", throttle.DefaultMargin, "the transport's budget margin (transport.Transport.Margin; 0: none)")
	fs.Float64Var(&o.share, "limit-share", 0, "the share of each limit the transport lets calls use (transport.Transport.LimitShare; 0: all)")
	fs.BoolVar(&o.background, "background", false, "the calls are background calls (transport.Background)")
	return fs
}

// planRow is a plan row as --json writes it.
type planRow struct {
	Scope       string            `json:"scope"`
	PerTick     int               `json:"perTick"`
	Every       throttle.Duration `json:"every,omitempty"` // absent when mixed
	BurstPeak   int               `json:"burstPeak"`
	SustainPeak int               `json:"sustainPeak"`
	Burst       int               `json:"burst"`
	Sustain     int               `json:"sustain"`
	BurstLeft   int               `json:"burstLeft"`
	SustainLeft int               `json:"sustainLeft"`
	Fastest     throttle.Duration `json:"fastest"` // 0s: none
	Plain       throttle.Duration `json:"plainFastest"`
	Batch       bool              `json:"batch"`
	Safe        bool              `json:"safe"`
}

// client is the transport the flags describe, as the planner models it.
func (o *planOpts) client() (limits.PlanClient, error) {
	if o.margin < 0 || o.margin > throttle.SustainPeriod {
		return limits.PlanClient{}, fmt.Errorf("--margin %v: want 0 to %v", o.margin, throttle.SustainPeriod)
	}
	if !(o.share >= 0 && o.share <= 1) { // NaN too
		return limits.PlanClient{}, fmt.Errorf("--limit-share %v: want 0 (all) to 1", o.share)
	}
	tr := &transport.Transport{Margin: o.margin, LimitShare: o.share}
	if o.margin == 0 {
		tr.Margin = -1 // the transport's zero is its default; the flag's is none
	}
	prio := transport.Interactive
	if o.background {
		prio = transport.Background
	}
	return tr.PlanClient(prio), nil
}

func (o *planOpts) run(_ context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return &exitError{2, errors.New("name the periodic calls: SCOPE:EVERY[:COUNT], such as social:10s")}
	}
	client, err := o.client()
	if err != nil {
		return &exitError{2, err}
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
	rows, err := l.PlanFor(calls, client)
	if err != nil {
		return &exitError{2, err}
	}
	over := false
	for _, r := range rows {
		over = over || !r.Safe()
	}
	if o.json {
		out := make([]planRow, 0, len(rows))
		for _, r := range rows {
			out = append(out, planRow{r.Scope, r.PerTick, throttle.Duration(r.Every), r.BurstPeak, r.SustainPeak, r.Burst, r.Sustain,
				r.BurstLeft, r.SustainLeft, throttle.Duration(r.Fastest), throttle.Duration(r.Plain), r.Batch, r.Safe()})
		}
		if err := printJSON(e.stdout, out); err != nil {
			return err
		}
	} else {
		printPlan(e, rows)
	}
	if over {
		return &exitError{1, errors.New("a scope's periodic calls are more than the transport sends at once")}
	}
	return nil
}

// printPlan writes the plan as a table.
func printPlan(e *env, rows []limits.PlanRow) {
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SCOPE\tA TICK\tEVERY\tBURST\tSUSTAIN\tFGRL\tPLAIN\tVERDICT")
	for _, r := range rows {
		every := "mixed"
		if r.Every > 0 {
			every = r.Every.String()
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d/%d\t%d/%d\t%s\t%s\t%s\n", r.Scope, r.PerTick, every, r.BurstPeak, r.Burst, r.SustainPeak, r.Sustain,
			interval(r.Fastest), interval(r.Plain), verdict(r))
	}
	tw.Flush()
}

// plural is one when n is 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// interval says a fastest interval; 0 is none.
func interval(d time.Duration) string {
	if d == 0 {
		return "none"
	}
	return d.String()
}

// verdict says a plan row in words.
func verdict(r limits.PlanRow) string {
	v := "ok: every call at once"
	switch left := min(r.BurstLeft, r.SustainLeft); {
	case r.Fastest == 0:
		v = "over: more calls a tick than a limit"
	case left < 0:
		v = fmt.Sprintf("over: %d %s", -left, plural(-left, "call waits or is refused", "calls wait or are refused"))
	case left == 0:
		v = "at a limit: one more call waits"
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
	fmt.Fprintf(tw, "revision %s: burst per 15 s, sustain per 300 s, per user + title\n", shownRevision(l.Revision))
	fmt.Fprintln(tw, "SCOPE\tHOSTS\tREQUESTS\tBURST\tSUSTAIN\tPUB\tCERT")
	for _, r := range l.Rules {
		hosts, reqs := firstOf(r.Hosts, 24), safetext.Clip(requests(&r), 20)
		if o.wide { // a file's text, escaped whole
			hosts, reqs = safetext.Clip(strings.Join(r.Hosts, ","), math.MaxInt), safetext.Clip(requests(&r), math.MaxInt)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%d\n", safetext.Clip(r.Scope(), 24), hosts, reqs,
			r.Burst, r.Sustain, dash(r.PublisherSustain), r.CertificationLimit())
	}
	if f := l.Fallback; f != nil {
		fmt.Fprintf(tw, "(other hosts)\t*\tany\t%d\t%d\t-\t%d\n", f.Burst, f.Sustain, f.CertificationLimit())
	}
	return tw.Flush()
}

// shownRevision is a limits revision as xblcall prints it, anywhere: a
// file's or a trace's, escaped and clipped, and what looks like a
// credential in it hidden (safetext.HideOpaque).
func shownRevision(rev string) string { return safetext.Clip(safetext.HideOpaque(rev), 60) }

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
