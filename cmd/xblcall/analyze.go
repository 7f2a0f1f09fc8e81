package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	flag "github.com/spf13/pflag"

	"github.com/xblgo/fgrl/analyze"
	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/whatif"
)

func analyzeCommand(e *env) *cobra.Command {
	o := new(analyzeOpts)
	c := &cobra.Command{
		Use:   "analyze TRACE...",
		Short: "find rate-limit problems in traces (HAR, Fiddler .saz, the trace analyzer's CSV and JSON data), as the Xbox Live Trace Analyzer does",
		Example: `  xblcall analyze examples/naive.har               # a trace of xblcall simulate, in the repository
  xblcall analyze --html report.html examples/naive.har   # Fiddler .saz archives too
  xblcall analyze examples/                      # every .har and .saz in the directory
  xblcall analyze examples/xlta-data.csv         # the trace analyzer's data files (its -data): v1509/v1510 CSV, or JSON
  xblcall analyze --json examples/naive.har | jq '.findings[] | select(.level == "fail")'
  xblcall analyze --format junit -o analyze.xml examples/naive.har   # a CI test page: a failure per failing finding listed, one per rule for the rest
  xblcall analyze --format sarif -o analyze.sarif examples/naive.har # code scanning (GitHub, Azure DevOps)
  xblcall analyze --what-if examples/ignored429s.har # the same calls through fgrl: 429s avoided, delays, verdict after
  xblcall simulate --client naive --har naive.har && xblcall analyze --trace-limits naive.har

Calls are grouped per user (the Authorization userhash, named by gamertag and
XUID where the trace shows them; a userhash that is not 1 to 20 digits, which
may be a token, only by '#' and a digest of it) and per service (a rule of the
limits data). Only Xbox services are judged: hosts the limits name, and other
*.xboxlive.com hosts at the limits' fallback rule; calls to other hosts are
listed apart, and their 429s are a not-judged warning. The limits are the 2020 table, or
--revision or --limits; a trace's own (a HAR of xblcall simulate names those
it ran under) only with --trace-limits. Calls without a token are a finding of
their own. Every finding names the
XSAPI functions that make its calls (the C API, the C++ one in parentheses),
from the trace analyzer's endpoint-to-API map.

The rules (the trace analyzer's; --rules FILE changes them, see the analyze
package doc), as reports name them:
` + ruleList() + `
Social Manager's calls are exempt from polling, repeated-calls and
small-batch. A report lists at most 50 findings per user, service, rule and
level, and 5000 in all, failures first; its verdict and counts are of every
finding, listed or not.

  red     a finding fails: a 300 s span reaches the rule's certification
          figure (printed per service in the CERT column: the limits data's,
          else 10 x sustain), or the title mishandles 429s (two or more in a
          row, or calls sent before Retry-After passed). Exit status 1.
  yellow  warnings only: spans past 90 % of a burst or sustain limit or over
          it, a single 429, bursts, repeats, polling, small or frequent
          batches, calls without a token, 429s from hosts not judged. Exit
          status 0.
  green   no finding. Exit status 0.
  incomplete
          a trace was not read whole: a file cut short, or not valid past
          some entry, or over the bound of one trace; an entry that is no
          call, or one readers file apart (a data file's call whose Uri
          names another host than its Host); a corrupt .saz file. The
          calls read are judged and listed,
          but what was not read may fail. Exit status 2, naming the trace,
          the entry and the byte.

Exit status 2 is also a usage or input error: no trace, a file that is no
trace, or traces holding no calls.
`,
		RunE: runE(e, o.run),
	}
	c.Flags().AddFlagSet(analyzeFlags(o))
	complete(c, map[string][]string{"revision": limits.Revisions(), "format": analyzeFormats}, map[string][]string{"limits": {"json"}, "rules": {"json"}, "html": {"html"}}, []string{"har", "saz"})
	return c
}

type analyzeOpts struct {
	json, verbose, whatIf, traceLimits               bool
	revision, limits, rules, html, format, userAgent string
	output                                           string
}

// analyzeFormats are --format's values: what the report is written as on
// standard output.
var analyzeFormats = []string{"text", "json", "junit", "sarif", "html"}

func analyzeFlags(o *analyzeOpts) *flag.FlagSet {
	fs := newFlagSet("analyze")
	fs.BoolVar(&o.json, "json", false, "print the report as JSON (schema "+analyze.Schema+"); the same as --format json")
	fs.StringVar(&o.format, "format", "text", "write the report to standard output as text, json, junit (JUnit XML: a failure per failing finding listed, and one per rule for those counted but not listed), sarif (SARIF 2.1.0, for code scanning) or html")
	fs.StringVar(&o.html, "html", "", "also write a self-contained HTML report to this file (with --what-if, the traces' own report)")
	fs.StringVarP(&o.output, "output", "o", "", "write the report (--format's) to this file instead of standard output, once the traces are read (never one of them emptied first); the exit status stays the verdict's, where a pipe to tee would give tee's")
	fs.StringVar(&o.rules, "rules", "", "rules data file (JSON or YAML; fields left out keep the trace analyzer's values)")
	fs.StringVar(&o.revision, "revision", "", "built-in limits table (default 2020)")
	fs.StringVar(&o.limits, "limits", "", "limits data file")
	fs.BoolVar(&o.traceLimits, "trace-limits", false, "judge by the limits the traces name (a HAR of xblcall simulate names those it ran under), every trace naming the same; only for traces you made: a trace that names limits chooses what judges it")
	fs.BoolVarP(&o.verbose, "verbose", "v", false, "list every finding with its evidence, and wider columns")
	fs.StringVar(&o.userAgent, "user-agent", "", "a title's own User-Agent: its calls are judged whatever their host (the limits' fallback rule where the limits have none), for a title's own services")
	fs.BoolVar(&o.whatIf, "what-if", false, "replay the traces' calls through the fgrl transport against the mock, in virtual time, and compare: 429s, delays, refusals and the verdict, before and after (text or --format json); under a soft memory limit of 180 MiB unless GOMEMLIMIT is set")
	return fs
}

func (o *analyzeOpts) run(ctx context.Context, e *env, args []string) (err error) {
	if len(args) == 0 {
		return &exitError{2, errors.New("need a trace: a .har or .saz file, a directory of them, or - for standard input")}
	}
	paths, err := tracePaths(args)
	if err != nil {
		return &exitError{2, err}
	}
	lim, err := o.judgeBy(e, paths)
	if err != nil {
		return err
	}
	rules, err := o.loadRules()
	if err != nil {
		return err
	}
	if o.userAgent != "" {
		if len(o.userAgent) > analyze.MaxUserAgent {
			return &exitError{2, fmt.Errorf("--user-agent: longer than %d bytes", analyze.MaxUserAgent)}
		}
		rules.UserAgent = o.userAgent
	}
	if o.json {
		o.format = "json"
	}
	if !slices.Contains(analyzeFormats, o.format) {
		return &exitError{2, fmt.Errorf("--format %s: want %s", safetext.Quote(o.format, 40), strings.Join(analyzeFormats, ", "))}
	}
	if err := checkWritable(o.html, "--html"); err != nil {
		return &exitError{2, err}
	}
	// Nothing is written once interrupted: the report or result, printed
	// or buffered for -o, ends at its next write, and the run with ctx's
	// error (exit 130), whatever came first. (Deferred first: it runs
	// last, after -o's.)
	defer func() {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
	}()
	if o.output != "" {
		// The report is written once the traces are read, in place of the
		// file (writeFileAtomic): an output that is one of the traces, or
		// a report already there, is never emptied before that, and is
		// left alone when no report is made.
		if err := replaceable(o.output); err != nil {
			return &exitError{2, fmt.Errorf("--output: %w", err)}
		}
		var report bytes.Buffer
		out := *e
		out.stdout, e = &report, &out
		defer func() {
			if report.Len() == 0 || ctx.Err() != nil { // an interrupted run writes no report
				return
			}
			// Put in place only if not interrupted by then: the check comes
			// after the file is written and synced, just before the rename.
			if werr := writeFileAtomicIf(o.output, report.Bytes(), 0o644, ctx.Err); werr != nil && ctx.Err() == nil {
				err = &exitError{2, fmt.Errorf("--output: %w", werr)}
			}
		}()
	}
	out := *e
	out.stdout, e = ctxWriter{ctx, e.stdout}, &out
	if o.whatIf {
		return o.runWhatIf(ctx, e, paths, lim, rules)
	}
	a, err := analyze.New(lim, rules)
	if err != nil {
		return &exitError{2, err}
	}
	if err := readTraces(ctx, e, paths, a); err != nil {
		return err
	}
	rep := a.Report()
	if rep.Calls == 0 && rep.Verdict != analyze.Incomplete {
		return &exitError{2, errors.New("the traces hold no calls")}
	}
	if o.html != "" {
		if err := writeHTMLReport(ctx, o.html, rep); err != nil {
			return err
		}
	}
	switch o.format {
	case "json":
		err = printJSON(e.stdout, rep)
	case "junit":
		err = rep.WriteJUnit(e.stdout)
	case "sarif":
		err = rep.WriteSARIF(e.stdout)
	case "html":
		err = rep.WriteHTML(e.stdout)
	default:
		err = printReport(e.stdout, rep, o.verbose)
	}
	if err != nil {
		return err
	}
	switch rep.Verdict {
	case analyze.Incomplete:
		return &exitError{2, incomplete(rep.Inputs)}
	case analyze.Red:
		return &exitError{1, fmt.Errorf("verdict red: %d findings fail certification", rep.Fails)}
	}
	return nil
}

// incomplete is the error of a verdict on traces not read whole, naming
// the first and where.
func incomplete(inputs []analyze.Input) error {
	var first string
	n := 0
	for _, in := range inputs {
		if gap := in.Gap(); gap != nil {
			if n++; n == 1 {
				first = safetext.Cut(in.Name, 200) + ": " + safetext.Cut(gap.String(), 300)
			}
		}
	}
	if n > 1 {
		first += fmt.Sprintf(" (and %d more traces)", n-1)
	}
	return fmt.Errorf("verdict incomplete: not read whole: %s", first)
}

// runWhatIf is --what-if: the traces replayed through fgrl, side by side
// with what they recorded. The exit status is the trace's, as without it,
// and --html writes the traces' own report.
func (o *analyzeOpts) runWhatIf(ctx context.Context, e *env, paths []string, lim *limits.Limits, rules *analyze.Rules) error {
	if o.format != "text" && o.format != "json" {
		return &exitError{2, fmt.Errorf("--what-if writes text or json, not %s", o.format)}
	}
	r, err := whatif.New(lim, rules)
	if err != nil {
		return &exitError{2, err}
	}
	defer whatif.LimitMemory()()
	if err := readTraces(ctx, e, paths, r); err != nil {
		return err
	}
	res, err := r.Run(ctx)
	if err != nil {
		return &exitError{2, err}
	}
	if o.html != "" { // the traces' own report, as without --what-if: the verdict the exit status is
		if err := writeHTMLReport(ctx, o.html, res.Before); err != nil {
			return err
		}
	}
	if o.format == "json" {
		err = printJSON(e.stdout, res)
	} else {
		err = printWhatIf(e.stdout, res, lim)
	}
	if err != nil {
		return err
	}
	switch res.Before.Verdict {
	case analyze.Incomplete:
		return &exitError{2, incomplete(res.Before.Inputs)}
	case analyze.Red:
		return &exitError{1, fmt.Errorf("the traces' verdict is red (with fgrl: %s)", res.After.Verdict)}
	}
	return nil
}

// printWhatIf prints the what-if side by side, a row per service.
func printWhatIf(w io.Writer, res *whatif.Result, lim *limits.Limits) error {
	fmt.Fprintf(w, "what-if: %d calls of the traces replayed through the fgrl transport against the mock (limits %s, virtual time)\n\n", res.Calls, shownRevision(lim.Revision))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "service\tcalls\t429s in the trace\t429s with fgrl\tdelayed\trefused locally\tdelay p50 (ms)\tp99\tmax\t")
	var t429, f429 int
	for _, s := range res.Services {
		t429, f429 = t429+s.Trace429s, f429+s.Fgrl429s
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%.0f\t%.0f\t%.0f\t\n", safetext.Clip(s.Service, 60), s.Calls, s.Trace429s, s.Fgrl429s, s.Delayed, s.Refused, s.P50Ms, s.P99Ms, s.MaxMs)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, in := range res.Before.Inputs {
		if gap := in.Gap(); gap != nil {
			fmt.Fprintf(w, "\nINCOMPLETE: %s: not read whole: %s", safetext.Cut(in.Name, 60), safetext.Cut(gap.String(), 200))
		}
	}
	for _, in := range res.After.Inputs[min(len(res.Before.Inputs), len(res.After.Inputs)):] { // the replay's own: what the JSON says of After
		if gap := in.Gap(); gap != nil {
			fmt.Fprintf(w, "\nINCOMPLETE with fgrl: %s: %s", safetext.Cut(in.Name, 60), safetext.Cut(gap.String(), 200))
		}
	}
	fmt.Fprintf(w, "\ncalls with fgrl: %d served (%s), %d of them delayed (%s); %d refused locally (%s)\n",
		res.Served, share(res.Served, res.Calls), res.Delayed, share(res.Delayed, res.Calls), res.Refused, share(res.Refused, res.Calls))
	fmt.Fprintf(w, "429s: %d in the traces, %d with fgrl (%d avoided)\nverdict: %s in the traces (%d failing, %d warnings), %s with fgrl (%d failing, %d warnings)\n",
		t429, f429, t429-f429, res.Before.Verdict, res.Before.Fails, res.Before.Warnings, res.After.Verdict, res.After.Fails, res.After.Warnings)
	if res.RefusedOnly() {
		fmt.Fprintf(w, "note: %s with fgrl only by refusing %s of the calls locally: the title sees those fail, and the service never counts them; pace or batch them to send them all\n",
			res.After.Verdict, share(res.Refused, res.Calls))
	}
	for _, s := range res.Unreproduced {
		fmt.Fprintf(w, "note: %s: the traces' 429s came below the limits %s, where fgrl holds, refuses or meets a 429 on fewer calls than the traces have 429s: the service throttled these calls by other limits (or calls the traces do not hold), and the verdict with fgrl assumes the table's\n",
			safetext.Clip(s, 60), shownRevision(lim.Revision))
	}
	return nil
}

// share is n of total as a whole percentage.
func share(n, total int) string {
	if total == 0 {
		return "0 %"
	}
	return fmt.Sprintf("%.0f %%", 100*float64(n)/float64(total))
}

func (o *analyzeOpts) loadRules() (*analyze.Rules, error) {
	if o.rules == "" {
		return analyze.DefaultRules(), nil
	}
	rules, err := analyze.LoadRules(o.rules)
	if err != nil {
		return nil, fmt.Errorf("--rules: %w", err)
	}
	return rules, nil
}

// tracePaths expands directories into the .har and .saz files they hold.
func tracePaths(args []string) ([]string, error) {
	var out []string
	for _, p := range args {
		st, err := os.Stat(p)
		switch {
		case p == "-":
			out = append(out, p)
			continue
		case err != nil:
			return nil, err
		case !st.IsDir():
			out = append(out, p)
			continue
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			return nil, err
		}
		n := len(out)
		for _, d := range entries {
			if ext := strings.ToLower(filepath.Ext(d.Name())); !d.IsDir() && (ext == ".har" || ext == ".saz") {
				out = append(out, filepath.Join(p, d.Name()))
			}
		}
		if len(out) == n {
			return nil, fmt.Errorf("%s holds no .har or .saz file", safetext.Clip(p, 200))
		}
	}
	return out, nil
}

// judgeBy returns the limits to judge by: --limits or --revision when
// given, else the 2020 table. A trace never chooses the limits that judge
// it (limits that cover none of its hosts would pass it, and every trace
// beside it) unless --trace-limits says to: then every trace must name the
// same limits.
func (o *analyzeOpts) judgeBy(e *env, paths []string) (*limits.Limits, error) {
	if o.traceLimits {
		if o.limits != "" || o.revision != "" {
			return nil, &exitError{2, errors.New("--trace-limits judges by the limits the traces name: give it without --limits and --revision")}
		}
		return namedLimits(e, paths)
	}
	return loadLimits(cmp.Or(o.revision, "2020"), o.limits)
}

// namedLimits returns the limits every trace names (--trace-limits).
func namedLimits(e *env, paths []string) (*limits.Limits, error) {
	var named []byte
	for i, p := range paths {
		raw, err := traceLimits(p)
		switch {
		case err != nil:
			return nil, fmt.Errorf("--trace-limits: %s: %w", safetext.Clip(p, 200), err)
		case raw == nil:
			return nil, &exitError{2, fmt.Errorf("--trace-limits: %s names no limits (a HAR of xblcall simulate names them; standard input is not read for them)", safetext.Clip(p, 200))}
		case i > 0 && !bytes.Equal(named, raw):
			return nil, &exitError{2, fmt.Errorf("--trace-limits: %s names other limits than %s", safetext.Clip(p, 200), safetext.Clip(paths[0], 200))}
		}
		named = raw
	}
	l, err := limits.Read(bytes.NewReader(named))
	if err != nil {
		return nil, fmt.Errorf("--trace-limits: the limits the traces name: %w", err)
	}
	fmt.Fprintf(e.stderr, "judging by the limits the traces name (%s)\n", shownRevision(l.Revision))
	return l, nil
}

// traceLimits returns the limits a HAR file names, or nil.
func traceLimits(p string) ([]byte, error) {
	if p == "-" {
		return nil, nil
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return analyze.HARLimits(f)
}

// readTrace reads one trace into a: a zip (a .saz) or a HAR, told apart by
// their first bytes. A file is read as it is; standard input through a
// buffer.
// traceSink takes a trace's calls: an analyze.Analyzer, or a
// whatif.Replayer for --what-if.
type traceSink interface {
	Add(*analyze.Call)
	AddInput(analyze.Input)
}

// readTraces reads every trace into a; an unreadable one is an input error
// (exit 2) naming it. An interrupt (ctx) ends the reading at the next
// read of any trace, and returns ctx's error: no verdict on what was read.
func readTraces(ctx context.Context, e *env, paths []string, a traceSink) error {
	for _, p := range paths {
		err := readTrace(ctx, e, p, a)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			return &exitError{2, fmt.Errorf("%s: %w", safetext.Clip(p, 200), err)}
		}
	}
	return nil
}

func readTrace(ctx context.Context, e *env, p string, a traceSink) error {
	var in analyze.Input
	var err error
	if p == "-" {
		br := bufio.NewReaderSize(ctxReader{ctx, e.stdin}, 64<<10)
		head, _ := br.Peek(8)
		switch {
		case isZip(head):
			in, err = readSAZ(ctx, br, a)
		case isData(head):
			in, err = analyze.ReadData(br, a.Add)
		default:
			in, err = analyze.ReadHAR(br, a.Add)
		}
	} else {
		in, err = readTraceFile(ctx, p, a)
	}
	if err != nil {
		return err
	}
	in.Name = p
	if p == "-" {
		in.Name = "standard input"
	}
	a.AddInput(in)
	return nil
}

func readTraceFile(ctx context.Context, p string, a traceSink) (analyze.Input, error) {
	f, err := os.Open(p)
	if err != nil {
		return analyze.Input{}, err
	}
	defer f.Close()
	head := make([]byte, 8)
	n, _ := io.ReadFull(f, head)
	if isZip(head[:n]) {
		return readSAZFile(ctx, f, a)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return analyze.Input{}, err
	}
	if isData(head[:n]) {
		return analyze.ReadData(ctxReader{ctx, f}, a.Add)
	}
	return analyze.ReadHAR(ctxReader{ctx, f}, a.Add)
}

// ctxReader and ctxReaderAt end reading at an interrupt, ctxWriter writing:
// each read or write first checks ctx (a read already waiting is
// runBounded's to end).
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}

type ctxReaderAt struct {
	ctx context.Context
	r   io.ReaderAt
}

func (c ctxReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.ReadAt(p, off)
}

func isZip(head []byte) bool { return bytes.HasPrefix(head, []byte("PK\x03\x04")) }

// isData reports whether a file is one of the trace analyzer's data files:
// a CSV starting with its version ("v1509", "v1510") or a JSON array of
// endpoints (a HAR is an object).
func isData(head []byte) bool {
	head = bytes.TrimLeft(head, "\ufeff \t\r\n")
	return bytes.HasPrefix(head, []byte("v15")) || bytes.HasPrefix(head, []byte("["))
}

// readSAZ reads a zip from standard input, through a temporary file, as zip
// needs to seek, at most maxStdinSAZ bytes of it.
func readSAZ(ctx context.Context, r io.Reader, a traceSink) (analyze.Input, error) {
	f, err := os.CreateTemp("", "xblcall-*.saz")
	if err != nil {
		return analyze.Input{}, err
	}
	// Gone from the directory at once where the system allows it (the open
	// file reads on): a run given up on after an interrupt, or killed,
	// leaves no copy of the trace's requests behind. Elsewhere, when the
	// reading ends.
	if os.Remove(f.Name()) != nil {
		defer os.Remove(f.Name())
	}
	defer f.Close()
	limit := maxStdinSAZ.Load()
	n, err := io.Copy(f, io.LimitReader(r, limit+1))
	if err != nil {
		return analyze.Input{}, err
	}
	if n > limit {
		return analyze.Input{}, &exitError{2, fmt.Errorf("a .saz on standard input over %d MiB: give it as a file", limit>>20)}
	}
	return readSAZFile(ctx, f, a)
}

// maxStdinSAZ bounds a .saz read from standard input (copied to a temporary
// file first); lowered by tests, whose interrupted runs may leave a read
// going after them (hence atomic).
var maxStdinSAZ = func() *atomic.Int64 {
	var v atomic.Int64
	v.Store(analyze.MaxTraceBytes)
	return &v
}()

// readSAZFile reads the zip f.
func readSAZFile(ctx context.Context, f *os.File, a traceSink) (analyze.Input, error) {
	st, err := f.Stat()
	if err != nil {
		return analyze.Input{}, err
	}
	return analyze.ReadSAZ(ctxReaderAt{ctx, f}, st.Size(), a.Add)
}

// writeHTMLReport writes rep's HTML form to the file name (--html), made
// whole in memory first; nothing of it once ctx is done.
func writeHTMLReport(ctx context.Context, name string, rep *analyze.Report) error {
	var b bytes.Buffer
	if err := rep.WriteHTML(&b); err != nil {
		return fmt.Errorf("--html: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	f, err := createOutput(name)
	if err != nil {
		return fmt.Errorf("--html: %w", err)
	}
	// In pieces, each after a check of ctx: to a pipe, an interrupt stops
	// the report at the next piece.
	w := ctxWriter{ctx, f}
	for p := b.Bytes(); len(p) > 0 && err == nil; {
		n := min(len(p), 32<<10)
		_, err = w.Write(p[:n])
		p = p[n:]
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		return fmt.Errorf("--html: %w", err)
	}
	return nil
}

// reportFindings bounds the findings the table lists without -v.
const reportFindings = 20

// printReport prints the report in 100 columns (-v: every finding, with
// its evidence, and wider cells). Text from the trace is escaped.
func printReport(w io.Writer, rep *analyze.Report, verbose bool) error {
	cell := func(s string, n int) string {
		s = safetext.Cut(s, 1000)
		if verbose {
			return s
		}
		return safetext.Cut(s, n)
	}
	for _, in := range rep.Inputs {
		fmt.Fprintf(w, "%s: %d calls", cell(in.Name, 60), in.Calls)
		if in.ProblemCount > 0 {
			fmt.Fprintf(w, ", %d entries skipped (the first: %s)", in.ProblemCount, cell(in.Problems[0].String(), 50))
		}
		fmt.Fprintln(w)
		if in.Stop != nil {
			fmt.Fprintf(w, "  INCOMPLETE: read in part: %s\n", cell(in.Stop.String(), 70))
		} else if in.Truncated != "" {
			fmt.Fprintf(w, "  INCOMPLETE: read in part: %s\n", cell(in.Truncated, 70))
		}
	}
	fmt.Fprintf(w, "judged %d calls in %d user-service groups\n", rep.Judged, len(rep.Groups))
	printHosts(w, "not judged (no rule of the limits covers the host)", rep.NotJudged, cell)
	printHosts(w, "no token", rep.NoToken, cell)
	if rep.Realtime > 0 {
		fmt.Fprintf(w, "real-time activity: %d sockets and shoulder taps (%d websocket messages), not judged\n", rep.Realtime, rep.RealtimeMessages)
	}
	if len(rep.Groups) > 0 {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "SERVICE\tUSER\tCALLS\tPEAK 15S\tPEAK 300S\tCERT\t429S\tFAIL\tWARN\t")
		for _, g := range rep.Groups {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d/%s\t%d/%s\t%s\t%d\t%d\t%d\t\n", cell(g.Service, 18), cell(g.User, 22), g.Calls,
				g.PeakBurst, dash(g.Burst), g.PeakSustain, dash(g.Sustain), dash(g.Certification), g.Server429s, g.Fails, g.Warnings)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if verbose {
			printGroupStats(w, rep, cell)
		}
	}
	printFindings(w, rep, verbose, cell)
	if rep.Verdict == analyze.Incomplete {
		fmt.Fprintf(w, "\nverdict INCOMPLETE: the traces were not read whole; among the calls read, %d failures, %d warnings\n", rep.Fails, rep.Warnings)
		return nil
	}
	fmt.Fprintf(w, "\nverdict %s: %d failures, %d warnings\n", strings.ToUpper(rep.Verdict), rep.Fails, rep.Warnings)
	return nil
}

// printGroupStats is -v's per-service statistics, as the trace analyzer
// gives them: calls, gaps, duplicates and the span of the calls.
func printGroupStats(w io.Writer, rep *analyze.Report, cell func(string, int) string) {
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "SERVICE\tUSER\tCALLS\tAVG GAP\tMIN GAP\tDUPLICATES\tSPAN\t")
	for _, g := range rep.Groups {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%v\t%v\t%d\t%v\t\n", cell(g.Service, 18), cell(g.User, 22), g.Calls,
			time.Duration(g.AvgGap).Round(time.Millisecond), time.Duration(g.MinGap).Round(time.Millisecond), g.Duplicates, g.Last.Sub(g.First).Round(time.Millisecond))
	}
	tw.Flush()
}

func printHosts(w io.Writer, what string, hosts []analyze.HostCount, cell func(string, int) string) {
	if len(hosts) == 0 {
		return
	}
	total := 0
	var parts []string
	for i, h := range hosts {
		total += h.Calls
		if i < 3 {
			part := fmt.Sprintf("%s %d", cell(h.Host, 30), h.Calls)
			if h.Server429s > 0 {
				part += fmt.Sprintf(" (%d answered 429)", h.Server429s)
			}
			parts = append(parts, part)
		}
	}
	more := ""
	if len(hosts) > 3 {
		more = fmt.Sprintf(", +%d hosts", len(hosts)-3)
	}
	fmt.Fprintf(w, "%s: %d calls (%s%s)\n", what, total, strings.Join(parts, ", "), more)
}

func printFindings(w io.Writer, rep *analyze.Report, verbose bool, cell func(string, int) string) {
	if len(rep.Findings) == 0 {
		return
	}
	shown := rep.Findings
	if !verbose && len(shown) > reportFindings {
		shown = shown[:reportFindings]
	}
	fmt.Fprintf(w, "\nFINDINGS (%d of %d", len(shown), rep.Fails+rep.Warnings)
	if len(shown) < len(rep.Findings) {
		fmt.Fprintf(w, "; -v, --json and --html list %d", len(rep.Findings))
	}
	if len(rep.Findings) < rep.Fails+rep.Warnings {
		fmt.Fprint(w, "; the rest are counted, not listed")
	}
	fmt.Fprintln(w, ")")
	byRule := make([]string, 0, len(rep.ByRule))
	for r, n := range rep.ByRule {
		byRule = append(byRule, fmt.Sprintf("%s %d", r, n))
	}
	sort.Strings(byRule)
	fmt.Fprintf(w, "by rule: %s\n", strings.Join(byRule, ", "))
	layout := "15:04:05.000"
	if rep.Start.YearDay() != rep.End.YearDay() || rep.Start.Year() != rep.End.Year() {
		layout = "01-02 15:04:05.000"
	}
	for _, f := range shown {
		who := f.User
		if who == "" {
			who = "-"
		}
		service := f.Service
		if service == "" {
			service = f.Host
		}
		fmt.Fprintf(w, "%s  %-4s  %-15s  %-20s  %s\n", f.Time.Format(layout), strings.ToUpper(f.Level), f.Rule,
			cell(service, 20), cell(who, 36))
		fmt.Fprintf(w, "    %s\n", cell(f.Reason, 95))
		if verbose {
			if f.URL != "" {
				fmt.Fprintf(w, "    call: %s\n", cell(f.URL, 200))
			}
			var ev []string
			for _, x := range f.Evidence {
				ev = append(ev, fmt.Sprintf("#%d %s %d", x.Index, x.Time.Format("15:04:05.000"), x.Status))
			}
			fmt.Fprintf(w, "    %d calls: %s\n", f.Calls, strings.Join(ev, ", "))
		}
	}
}

// ruleList is the help's list of the analyzer's rules, one a line, from
// analyze.RuleInfos: the help names every rule the reports carry.
func ruleList() string {
	var b strings.Builder
	for _, r := range analyze.RuleInfos {
		fmt.Fprintf(&b, "  %-17s %s\n", r.ID, r.Short)
	}
	return b.String()
}
