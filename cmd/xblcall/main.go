// Command xblcall calls Xbox services, serves the fgrl mock, simulates call
// patterns against it in virtual time, prints the FGRL limits and analyzes
// captured traces for FGRL problems.
//
// Usage:
//
//	xblcall <command> [flags] [args]
//
// Commands: analyze, call, check, limits, login, logout, mock, proxy, simulate, token, whoami (commandList, the one registry), help, completion.
// Run "xblcall help <command>" for a command's flags and examples.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	flag "github.com/spf13/pflag"
	"github.com/xblgo/fgrl/analyze"
	"github.com/xblgo/fgrl/datafile"
	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/limits"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := runBounded(ctx, stop, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// interruptGrace is how long a command may take to end once interrupted
// (the mock's shutdown takes up to 5 s) before runBounded gives up on it.
var interruptGrace = 10 * time.Second

// runBounded is run, ended within interruptGrace of an interrupt even when
// the command is stuck where no context reaches (opening a FIFO that no one
// writes: -d @fifo, --world fifo, analyze fifo): 130. After the first
// interrupt, stop restores the signals' default, so a second Ctrl-C ends
// the process at once.
func runBounded(ctx context.Context, stop func(), args []string, stdout, stderr io.Writer, opts ...func(*env)) int {
	done := make(chan int, 1)
	go func() { done <- run(ctx, args, stdout, stderr, opts...) }()
	select {
	case code := <-done:
		return code
	case <-ctx.Done():
	}
	stop()
	t := time.NewTimer(interruptGrace)
	defer t.Stop()
	select {
	case code := <-done:
		return code
	case <-t.C:
		fmt.Fprintf(stderr, "xblcall: interrupted; gave up on the command after %v\n", interruptGrace)
		return 130
	}
}

// runFunc runs a command with its positional arguments.
type runFunc func(ctx context.Context, e *env, args []string) error

// env is what a command writes to and reads from, its variables and the
// user's config directory (where the sign-in is stored).
type env struct {
	stdout, stderr io.Writer
	stdin          io.Reader
	getenv         func(string) string
	configDir      func() (string, error)
	exit           int // a status the help asks for (the help of a command that does not exist)
}

// commandList builds the subcommands: the CLI's one registry.
func commandList(e *env) []*cobra.Command {
	return []*cobra.Command{analyzeCommand(e), callCommand(e), checkCommand(e), limitsCommand(e), loginCommand(e),
		logoutCommand(e), mockCommand(e), proxyCommand(e), simulateCommand(e), tokenCommand(e), watchCommand(e), whoamiCommand(e)}
}

// runE runs a command with the context cobra gives it.
func runE(e *env, run runFunc) func(*cobra.Command, []string) error {
	return func(c *cobra.Command, args []string) error { return run(c.Context(), e, args) }
}

// complete registers shell completion: the values a flag takes (choices),
// the extensions of the files a flag names (files) and of the files the
// arguments name (args).
func complete(c *cobra.Command, choices, files map[string][]string, args []string) {
	for name, values := range choices {
		c.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
	}
	for name, exts := range files {
		c.MarkFlagFilename(name, exts...)
	}
	if args != nil {
		c.ValidArgsFunction = func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return args, cobra.ShellCompDirectiveFilterFileExt
		}
	}
}

// exitError carries a specific exit status.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

// run runs xblcall with args and returns its exit status: 0 on success, 1 on
// failure (with a one-line reason on stderr; a red analysis too), 2 for
// usage and input errors, 130 when interrupted (Ctrl-C). opts adjust the environment
// (tests give standard input, variables and a config directory).
func run(ctx context.Context, args []string, stdout, stderr io.Writer, opts ...func(*env)) int {
	out := &outWriter{w: stdout}
	e := &env{stdout: out, stderr: stderr, stdin: os.Stdin, getenv: os.Getenv, configDir: os.UserConfigDir}
	for _, o := range opts {
		o(e)
	}
	root := newRoot(e)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	code := exitCode(ctx, err)
	if err == nil && out.failed() != nil {
		// A command that wrote its output and did not check the write
		// (a full disk under "> file"), or one that ends without an error
		// when interrupted (mock, proxy): no success, and not an
		// interruption either: the failed write is named (2).
		err = out.failed()
		code = exitCode(context.Background(), err)
	}
	if code == 0 {
		code = e.exit
	}
	var ee *exitError
	switch {
	case code == 130:
		fmt.Fprintf(stderr, "xblcall %s: interrupted\n", cmd.Name())
	case errors.As(err, &ee):
		if ee.err != nil && ee.err.Error() != "" {
			fmt.Fprintf(stderr, "%s: %s\n", cmd.CommandPath(), oneLine(ee.err))
		}
	case err != nil:
		fmt.Fprintf(stderr, "%s: %v\n", cmd.CommandPath(), oneLine(err))
	}
	return code
}

// outWriter is standard output, remembering its first failed write: every
// command's output is checked once it ends (run), whether or not the
// command checked each write.
type outWriter struct {
	w   io.Writer
	mu  sync.Mutex // guards err: a command may write from several goroutines
	err error
}

func (o *outWriter) Write(p []byte) (int, error) {
	n, err := o.w.Write(p)
	if err != nil {
		o.mu.Lock()
		if o.err == nil {
			o.err = err
		}
		o.mu.Unlock()
	}
	return n, err
}

// failed returns the first write that failed, or nil.
func (o *outWriter) failed() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.err
}

// exitCode is the one place the CLI chooses its exit status: 0 for
// success; 130 when interrupted; 2 for usage and flag errors and for
// inputs that cannot be read or are malformed: any data file (limits, a
// world, a script, rules, a pattern: a *datafile.Error, which names the
// file, line and field), a file that cannot be opened, a trace that is
// none, a bad URL; 1 for a failure of the work itself.
func exitCode(ctx context.Context, err error) int {
	var ee *exitError
	var pe *fs.PathError
	var de *datafile.Error
	switch {
	case err == nil:
		return 0
	case ctx.Err() != nil:
		return 130
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &pe), errors.As(err, &de), errors.Is(err, limits.ErrUnknownRevision),
		errors.Is(err, analyze.ErrNotTrace):
		return 2
	}
	return 1
}

// newRoot builds the command tree (spf13/cobra): parsing, help, and shell
// completion ('xblcall completion bash').
func newRoot(e *env) *cobra.Command {
	var root *cobra.Command
	root = &cobra.Command{
		Use:           "xblcall",
		Short:         "call Xbox services without tripping their rate limits",
		Args:          cobra.ArbitraryArgs, // an unknown command is ours to report
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				usage(e.stderr, root)
				return &exitError{2, nil}
			}
			return &exitError{2, fmt.Errorf("unknown command %q (run xblcall help)", safetext.Clip(args[0], 40))}
		},
	}
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &exitError{2, fmt.Errorf("%v (run %s)", err, helpFor(c))}
	})
	root.Version = version()
	root.SetVersionTemplate("xblcall {{.Version}}\n")
	for _, c := range commandList(e) {
		c.Flags().SortFlags = false
		root.AddCommand(c)
	}
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "completion" {
			c.Use, c.Short, c.Example = completionHelp.Use, completionHelp.Short, completionHelp.Example
		}
	}
	defaultHelp := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		switch {
		case c == root && unknownCommand(root, args) != "":
			// xblcall nosuch --help: the command does not exist.
			fmt.Fprintf(e.stderr, "xblcall: unknown command %q (run xblcall help)\n", safetext.Clip(unknownCommand(root, args), 40))
			e.exit = 2
		case c == root:
			usage(e.stdout, root)
		case c.Parent() == root || c.Parent() != nil && c.Parent().Parent() == root && c.Parent().Name() != "completion":
			commandHelp(e.stdout, c)
		default: // cobra's own: completion's shells
			defaultHelp(c, args)
		}
	})
	root.SetHelpCommand(&cobra.Command{
		Use:   "help [command]",
		Short: "show a command's flags and examples",
		RunE: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				usage(e.stdout, root)
				return nil
			}
			c, _, err := root.Find(args)
			if err != nil || c == root {
				return &exitError{2, fmt.Errorf("unknown command %q", safetext.Clip(args[0], 40))}
			}
			return c.Help()
		},
	})
	return root
}

// oneLine writes err on one line, escaped and clipped: an error can carry
// text from a server or a trace.
func oneLine(err error) string {
	scrubURLs(err, nil)
	return safetext.Clip(strings.ReplaceAll(err.Error(), "\n", "; "), 2000)
}

// helpFor is the command that shows c's help: "xblcall help limits plan".
func helpFor(c *cobra.Command) string {
	if !c.HasParent() {
		return "xblcall help"
	}
	return "xblcall help " + strings.TrimPrefix(c.CommandPath(), c.Root().Name()+" ")
}

// unknownCommand returns the first argument that names no command of
// root's, or "": a flag, or a command, is not one.
func unknownCommand(root *cobra.Command, args []string) string {
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			continue
		}
		if c, _, err := root.Find([]string{a}); err != nil || c == root {
			return a
		}
		return ""
	}
	return ""
}

// version is the module's version and the commit it was built from, as the
// build recorded them ("(devel)" for go run and go build in a checkout).
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	v := bi.Main.Version
	for _, s := range bi.Settings {
		switch {
		case s.Key == "vcs.revision" && len(s.Value) >= 12:
			v += " " + s.Value[:12]
		case s.Key == "vcs.modified" && s.Value == "true":
			v += " (modified)"
		}
	}
	return v
}

func usage(w io.Writer, root *cobra.Command) {
	fmt.Fprintln(w, "usage: xblcall <command> [flags] [args]")
	fmt.Fprintln(w)
	for _, c := range root.Commands() {
		if c.Name() == "help" {
			continue
		}
		fmt.Fprintf(w, "  %-12s %s\n", c.Name(), c.Short)
		for _, sub := range c.Commands() { // every command is listed: limits plan too
			if sub.Name() != "help" && c.Name() != "completion" {
				fmt.Fprintf(w, "  %-12s %s\n", c.Name()+" "+sub.Name(), sub.Short)
			}
		}
	}
	fmt.Fprintln(w, "\nRun 'xblcall help <command>' for its flags and examples.")
	fmt.Fprintln(w, "Exit status: 0 success, 1 failure (a red analysis too), 2 usage or input error, 130 interrupted.")
}

// commandHelp is the one help template: usage (the command's path, [flags]
// when it has any, and its arguments: Use holds the name and the
// arguments only, the flags come from the flag set), summary, flags,
// subcommands, examples.
func commandHelp(w io.Writer, c *cobra.Command) {
	line := c.CommandPath()
	if c.HasAvailableLocalFlags() {
		line += " [flags]"
	}
	if _, args, ok := strings.Cut(c.Use, " "); ok {
		line += " " + args
	}
	fmt.Fprintf(w, "usage: %s\n\n%s\n", line, c.Short)
	if subs := c.Commands(); len(subs) > 0 {
		fmt.Fprintln(w, "\nCommands:")
		for _, sub := range subs {
			fmt.Fprintf(w, "  %-10s %s (%s)\n", sub.Name(), sub.Short, helpFor(sub))
		}
	}
	if fs := c.LocalFlags(); fs.HasAvailableFlags() {
		fmt.Fprintln(w, "\nFlags:")
		// pflag writes a bool flag as --json[=true|false]; it is --json.
		fmt.Fprint(w, strings.ReplaceAll(fs.FlagUsages(), "[=true|false]", "             "))
	}
	if c.Example != "" {
		fmt.Fprintf(w, "\nExamples:\n%s", c.Example)
	}
}

// completionHelp is what cobra's completion command shows, in the
// others' style.
var completionHelp = cobra.Command{
	Use:   "completion bash|zsh|fish|powershell",
	Short: "print a shell completion script for an installed xblcall (go install ./cmd/xblcall)",
	Example: `  source <(xblcall completion bash)                # this shell; add it to ~/.bashrc to keep it
  xblcall completion zsh > "${fpath[1]}/_xblcall"
  xblcall completion fish > ~/.config/fish/completions/xblcall.fish
`,
}

// newFlagSet returns a flag set that reports errors instead of exiting.
// Flags may come before or after the arguments (spf13/pflag), long ones
// spelt --name and some with a one-letter -X form.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	return fs
}

// printJSON writes v as indented JSON, the one form of every --json output.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
