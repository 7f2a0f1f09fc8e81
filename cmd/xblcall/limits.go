package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	flag "github.com/spf13/pflag"

	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/limits"
)

func limitsCommand(e *env) *cobra.Command {
	o := new(limitsOpts)
	c := &cobra.Command{
		Use:   "limits [--json] [--wide] [--revision 2020|2022] [--file F]",
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
	return c
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
		return limits.LoadFile(file)
	}
	return limits.Revision(revision)
}

func (o *limitsOpts) run(_ context.Context, e *env, args []string) error {
	if len(args) > 0 {
		return &exitError{2, errors.New("limits takes no arguments")}
	}
	l, err := loadLimits(o.revision, o.file)
	if err != nil {
		return err
	}
	if o.json {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
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
