package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	flag "github.com/spf13/pflag"

	"github.com/xblgo/fgrl/analyze"
	"github.com/xblgo/fgrl/internal/har"
	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/internal/xblid"
	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/replay"
)

func simulateCommand(e *env) *cobra.Command {
	o := new(simulateOpts)
	c := &cobra.Command{
		Use:   "simulate",
		Short: "replay a call pattern against the embedded mock in virtual time",
		Example: `  xblcall simulate                        # the FGRL documentation's worked example, plain client
  xblcall simulate --client all           # plain client, XSAPI retries and fgrl side by side
  xblcall simulate --pattern examples/calls.csv --client fgrl --svg calls.svg
  xblcall simulate --pattern examples/mixed.csv --client all --coalesce   # priorities, a poller, coalescing
  xblcall simulate --pattern examples/calls.csv --client all --service-limits examples/drift.json   # fgrl learns drifted limits
  xblcall simulate --json | jq '.[0].rows'
  xblcall simulate --client naive --har naive.har && xblcall analyze --trace-limits naive.har
  xblcall simulate --pattern examples/polling.csv --client naive,fgrl,subscribed   # polling vs a subscription

A pattern is CSV (time,service,user,count[,spread[,priority]]; times in
seconds; service a scope from 'xblcall limits'; priority interactive, the
default, or background) or the same fields as a JSON array:
  time,service,user,count,spread,priority
  0,profile,2533274791234567,40,10
  20,presence/write,2533274791234567,5
  0,profile,2533274792222222,24,60,background
`,
		RunE: runE(e, o.run),
	}
	c.Flags().AddFlagSet(simulateFlags(o))
	complete(c, map[string][]string{"client": append(slices.Clone(replay.Clients), replay.Subscribed, "all"), "revision": limits.Revisions()}, map[string][]string{"pattern": {"csv", "json"}, "svg": {"svg"}, "har": {"har"}, "limits": {"json"}, "service-limits": {"json"}}, nil)
	return c
}

type simulateOpts struct {
	pattern, client, svg, har, revision, limits, title, service string
	json, coalesce                                              bool
}

func simulateFlags(o *simulateOpts) *flag.FlagSet {
	fs := newFlagSet("simulate")
	fs.StringVar(&o.pattern, "pattern", "", "the call pattern (CSV or JSON; - for stdin); default: the FGRL documentation's worked example")
	fs.StringVar(&o.client, "client", "naive", "naive, xsapi, fgrl, subscribed (RTA where it exists, fgrl for the rest), a list (naive,fgrl,subscribed) or all (naive, xsapi, fgrl), side by side")
	fs.BoolVar(&o.json, "json", false, "print the results as JSON")
	fs.StringVar(&o.svg, "svg", "", "also draw requests and throttles over time to this SVG file")
	fs.StringVar(&o.har, "har", "", "also write the requests the service saw to this HAR file (one client), for 'xblcall analyze'")
	fs.StringVar(&o.revision, "revision", "2020", "built-in limits table")
	fs.StringVar(&o.limits, "limits", "", "limits data file (overrides --revision)")
	fs.StringVar(&o.title, "title", "1234567890", "the title ID")
	fs.StringVar(&o.service, "service-limits", "", "limits data file the simulated service applies, when they drifted from the clients' (fgrl learns them from 429 bodies)")
	fs.BoolVar(&o.coalesce, "coalesce", false, "the fgrl client coalesces identical reads of a user (CoalesceReads, a 1 s read cache)")
	return fs
}

func (o *simulateOpts) run(ctx context.Context, e *env, args []string) error {
	if len(args) > 0 {
		return &exitError{2, errors.New("simulate takes no arguments (use --pattern FILE)")}
	}
	clients, err := clientList(o.client)
	if err != nil {
		return err
	}
	if err := xblid.CheckTitle(o.title); err != nil {
		return &exitError{2, fmt.Errorf("--title: %w", err)}
	}
	p, lim, desc, err := o.load(e)
	if err != nil {
		return err
	}
	served, err := o.serviceLimits()
	if err != nil {
		return err
	}
	// Every service the pattern names is checked before any output is
	// opened (--har, --svg): a typo is an input error that loses no file.
	// (replay.Run checks them against the service's limits, as here.)
	svc := cmp.Or(served, lim)
	for i, ev := range p {
		if _, ok := svc.ByScope(ev.Service); !ok && ev.Req == nil {
			return &exitError{2, fmt.Errorf("--pattern: entry %d: unknown service %s (have %s)", i+1, safetext.Quote(ev.Service, 40), strings.Join(svc.Scopes(), ", "))}
		}
	}
	if err := checkWritable(o.svg, "--svg"); err != nil {
		return err
	}
	trace, err := o.openHAR(len(clients), lim)
	if err != nil {
		return err
	}
	var results []replay.Result
	for _, c := range clients {
		opts := replay.Options{Limits: lim, ServiceLimits: served, Client: c, TitleID: o.title, Coalesce: o.coalesce, Progress: progress(e, c)}
		if trace != nil {
			opts.Base = trace.tap
		}
		res, err := replay.Run(ctx, p, opts)
		if err != nil {
			return err
		}
		results = append(results, res)
	}
	if err := trace.close(); err != nil {
		return fmt.Errorf("--har: %w", err)
	}
	if o.svg != "" {
		if err := writeSVG(o.svg, results, desc); err != nil {
			return err
		}
	}
	if o.json {
		return printJSON(e.stdout, results)
	}
	return printSimulation(e.stdout, desc, results)
}

// checkWritable makes sure an output path can be written before a long run
// starts, so a typo does not lose the run. It leaves no trace: a file that
// did not exist (or that a link names but does not exist yet) is created
// and removed again, so a run that ends without its report leaves none;
// an existing file is opened and left as it is; a named pipe or a device
// (/dev/stdout, a FIFO a reader waits on) is not opened at all, since
// opening and closing it would hand a waiting reader an end of file.
func checkWritable(path, flag string) error {
	if path == "" {
		return nil
	}
	fi, err := os.Stat(path) // through a link
	switch {
	case err == nil && fi.Mode()&(fs.ModeNamedPipe|fs.ModeDevice|fs.ModeCharDevice) != 0:
		return nil
	case err == nil:
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return fmt.Errorf("%s: %w", flag, err)
		}
		return f.Close()
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: %w", flag, err)
	}
	// Not there yet (or a link to a file not made yet): made, through the
	// link if it is one, then removed.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("%s: %w", flag, err)
	}
	f.Close()
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return fmt.Errorf("%s: %w", flag, err)
	}
	return os.Remove(target)
}

// createOutput opens an output file that is written as the run goes or
// once it ends (--html, --svg, --har) as a shell's "> name" does: made or
// emptied, through a link, and write-only, so that a FIFO's open waits for
// its reader (os.Create opens read-write: a FIFO no one read took the
// report and lost it on close, exit 0). -o, and the files the mock and the
// proxy write, are replaced whole instead (writeFileAtomic: regular files
// only).
func createOutput(name string) (*os.File, error) {
	return os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
}

// harTrace is the --har file being written.
type harTrace struct {
	f   *os.File
	w   *har.Writer
	mu  sync.Mutex
	err error // the first write error
}

// openHAR creates the --har file before any work, so that a bad path fails
// at once; nil when --har is not given.
func (o *simulateOpts) openHAR(clients int, l *limits.Limits) (*harTrace, error) {
	if o.har == "" {
		return nil, nil
	}
	if clients != 1 {
		return nil, &exitError{2, errors.New("--har records one client: give --client naive, xsapi, fgrl or subscribed")}
	}
	f, err := createOutput(o.har)
	if err != nil {
		return nil, fmt.Errorf("--har: %w", err)
	}
	// The trace names its limits, so that xblcall analyze --trace-limits
	// judges it by them.
	doc, err := json.Marshal(struct {
		Revision string        `json:"revision"`
		Source   string        `json:"source,omitempty"`
		Fallback *limits.Rule  `json:"fallback,omitempty"`
		Rules    []limits.Rule `json:"rules"`
	}{l.Revision, l.Source, l.Fallback, l.Rules})
	if err != nil {
		f.Close()
		return nil, err
	}
	return &harTrace{f: f, w: har.NewWriterLimits(f, doc)}, nil
}

// tap records what reaches the simulated service (replay.Options.Base).
func (t *harTrace) tap(next http.RoundTripper, now func() time.Time) http.RoundTripper {
	return &analyze.Recorder{Base: next, Now: now, Add: t.write}
}

func (t *harTrace) write(c *analyze.Call) {
	e := har.Entry{Time: c.Time, Duration: c.Duration, Method: c.Method, URL: c.URL, Authorization: c.Authorization,
		RequestBody: c.RequestBody, Status: c.Status, RetryAfter: c.RetryAfter, ResponseBody: c.ResponseBody}
	if err := t.w.Write(&e); err != nil {
		t.mu.Lock()
		t.err = cmp.Or(t.err, err)
		t.mu.Unlock()
	}
}

func (t *harTrace) close() error {
	if t == nil {
		return nil
	}
	err := cmp.Or(t.err, t.w.Close())
	if cerr := t.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// clientList reads --client: all, or clients separated by commas.
func clientList(s string) ([]string, error) {
	if s == "all" {
		return replay.Clients, nil
	}
	var out []string
	for c := range strings.SplitSeq(s, ",") {
		if !slices.Contains(replay.Clients, c) && c != replay.Subscribed || slices.Contains(out, c) {
			return nil, &exitError{2, fmt.Errorf("unknown client %s (want naive, xsapi, fgrl, subscribed, a list of them such as naive,fgrl,subscribed, or all)", safetext.Quote(s, 60))}
		}
		out = append(out, c)
	}
	return out, nil
}

// serviceLimits returns the --service-limits file's limits; nil without it.
func (o *simulateOpts) serviceLimits() (*limits.Limits, error) {
	if o.service == "" {
		return nil, nil
	}
	l, err := limits.Load(o.service)
	if err != nil {
		return nil, fmt.Errorf("--service-limits: %w", err)
	}
	return l, nil
}

// load returns the pattern, its limits and a one-line description.
func (o *simulateOpts) load(e *env) (replay.Pattern, *limits.Limits, string, error) {
	limits, err := loadLimits(o.revision, o.limits)
	if err != nil {
		return nil, nil, "", err
	}
	if o.pattern == "" {
		p, l, err := replay.WorkedExample(limits)
		return p, l, "The FGRL documentation's worked example: one user, burst 30 / 15 s, sustain 100 / 300 s", err
	}
	var p replay.Pattern
	if o.pattern == "-" {
		p, err = replay.ReadPattern(e.stdin)
	} else {
		p, err = replay.LoadPattern(o.pattern)
	}
	if err != nil {
		return nil, nil, "", fmt.Errorf("--pattern: %w", err)
	}
	return p, limits, fmt.Sprintf("pattern %s: %d calls over %v", safetext.Clip(o.pattern, 200), p.Calls(), p.End().Round(time.Second)), nil
}

// tablesPerClient bounds the per-key tables printed; every key still gets
// a summary row.
const tablesPerClient = 5

func printSimulation(w io.Writer, desc string, results []replay.Result) error {
	fmt.Fprintln(w, desc)
	for _, r := range results {
		for i, k := range r.Keys {
			if i == tablesPerClient {
				fmt.Fprintf(w, "\nclient %s: %d more keys (summary below; --json has every table)\n", r.Client, len(r.Keys)-i)
				break
			}
			if err := printKeyTable(w, r.Client, k); err != nil {
				return err
			}
		}
		if len(r.Keys) > 1 {
			if err := printKeySummary(w, r); err != nil {
				return err
			}
		}
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	rta := slices.ContainsFunc(results, func(r replay.Result) bool { return r.Client == replay.Subscribed })
	head := "client\tcalls\tsent\tserved\tserver 429s\trefused locally\tfailed\t"
	if rta {
		head += "subscriptions\tpushed, not polled\t"
	}
	fmt.Fprintln(tw, head)
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t", r.Client, r.Calls, r.Sent, r.Served, r.Server429s, r.Refused, r.Failed)
		if rta {
			fmt.Fprintf(tw, "%d\t%d\t", r.Subscriptions, r.Pushed)
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if results[0].Background.Calls == 0 {
		return nil
	}
	fmt.Fprintln(w, "\ndelay the client added (ms, virtual time), by priority:")
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "client\tinteractive calls\trefused\tp50\tp99\tmax\tbackground calls\trefused\tp50\tp99\tmax\t")
	for _, r := range results {
		i, b := r.Interactive, r.Background
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.0f\t%.0f\t%.0f\t%d\t%d\t%.0f\t%.0f\t%.0f\t\n", r.Client,
			i.Calls, i.Refused, i.P50Ms, i.P99Ms, i.MaxMs, b.Calls, b.Refused, b.P50Ms, b.P99Ms, b.MaxMs)
	}
	return tw.Flush()
}

// printKeyTable prints what the service saw of one key, its rule in the
// header.
func printKeyTable(w io.Writer, client string, k replay.KeyResult) error {
	fmt.Fprintf(w, "\nclient %s, user %s, %s (burst %d / 15 s, sustain %d / 300 s):\n", client, k.User, k.Scope, k.Burst, k.Sustain)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "interval (s)\trequests\tburst count\tsustain count\tthrottled\tlimit\t")
	for _, row := range k.Rows {
		fmt.Fprintf(tw, "%d-%d\t%d\t%d\t%d\t%d\t%s\t\n", row.Start, row.End, row.Requests, row.BurstCount,
			row.SustainCount, row.Throttled, row.Limit)
	}
	return tw.Flush()
}

// printKeySummary prints one row per key: what reached the service and
// what it throttled.
func printKeySummary(w io.Writer, r replay.Result) error {
	fmt.Fprintf(w, "\nclient %s, every key:\n", r.Client)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "user\tscope\trequests\tthrottled\t")
	for _, k := range r.Keys {
		throttled := 0
		for _, row := range k.Rows {
			throttled += row.Throttled
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t\n", k.User, k.Scope, k.Requests, throttled)
	}
	return tw.Flush()
}

// progress returns a callback drawing the run's virtual progress as a bar
// on a terminal (cleared when the run ends), or nil when standard error is
// not a terminal.
func progress(e *env, client string) func(done, total time.Duration) {
	if !isTerminal(e.stderr) {
		return nil
	}
	var b *bar
	return func(done, total time.Duration) {
		if b == nil {
			b = newBar(e.stderr, true, int64(total/time.Second), client, "virtual s")
		}
		b.set(int64(done / time.Second))
		if done >= total {
			b.finish()
		}
	}
}
