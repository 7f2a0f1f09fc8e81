// Command xblcall calls Xbox services, serves the fgrl mock, simulates call
// patterns against it in virtual time, prints the FGRL limits and analyzes
// captured traces for FGRL problems.
//
// Usage:
//
//	xblcall <command> [flags] [args]
//
// Commands: call, limits, mock, token, simulate, analyze, help. Run
// "xblcall help <command>" for a command's flags and examples.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	flag "github.com/spf13/pflag"
	"github.com/xblgo/fgrl/internal/safetext"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// command is one subcommand.
type command struct {
	summary  string
	usage    string // flags and arguments
	examples string
	run      func(ctx context.Context, e *env, args []string) error
	flags    func() *flag.FlagSet // a flag set describing the flags, for help
}

// env is what a command writes to and reads from.
type env struct {
	stdout, stderr io.Writer
	stdin          io.Reader
	getenv         func(string) string
}

var commands = map[string]command{
	"call":     callCommand,
	"limits":   limitsCommand,
	"mock":     mockCommand,
	"token":    tokenCommand,
	"simulate": simulateCommand,
	"analyze":  analyzeCommand,
}

// exitError carries a specific exit status.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

// run runs xblcall with args and returns its exit status: 0 on success, 1 on
// failure (with a one-line reason on stderr), 2 for usage errors and red
// analyses, 130 when interrupted (Ctrl-C).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	e := &env{stdout: stdout, stderr: stderr, stdin: os.Stdin, getenv: os.Getenv}
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	name, rest := args[0], args[1:]
	if name == "help" || name == "-h" || name == "--help" || name == "-help" {
		return help(stdout, stderr, rest)
	}
	cmd, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "xblcall: unknown command %q (run xblcall help)\n", name)
		return 2
	}
	err := cmd.run(ctx, e, rest)
	var ee *exitError
	switch {
	case err != nil && ctx.Err() != nil:
		fmt.Fprintf(stderr, "xblcall %s: interrupted\n", name)
		return 130
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		commandHelp(stdout, name, cmd)
		return 0
	case errors.As(err, &ee):
		if ee.err != nil && ee.err.Error() != "" {
			fmt.Fprintf(stderr, "xblcall %s: %s\n", name, oneLine(ee.err))
		}
		return ee.code
	}
	fmt.Fprintf(stderr, "xblcall %s: %v\n", name, oneLine(err))
	return 1
}

// oneLine writes err on one line, escaped and clipped: an error can carry
// text from a server or a trace.
func oneLine(err error) string {
	return safetext.Clip(strings.ReplaceAll(err.Error(), "\n", "; "), 2000)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: xblcall <command> [flags] [args]")
	fmt.Fprintln(w)
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-9s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'xblcall help <command>' for its flags and examples.")
	fmt.Fprintln(w, "Exit status: 0 success, 1 failure, 2 usage error (and a red analysis), 130 interrupted.")
}

func help(stdout, stderr io.Writer, args []string) int {
	if len(args) == 0 {
		usage(stdout)
		return 0
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "xblcall help: unknown command %q\n", args[0])
		return 2
	}
	commandHelp(stdout, args[0], cmd)
	return 0
}

func commandHelp(w io.Writer, name string, cmd command) {
	fmt.Fprintf(w, "usage: xblcall %s %s\n\n%s\n", name, cmd.usage, cmd.summary)
	if cmd.flags != nil {
		fs := cmd.flags()
		fmt.Fprintln(w, "\nFlags:")
		fs.SetOutput(w)
		fs.PrintDefaults()
	}
	if cmd.examples != "" {
		fmt.Fprintf(w, "\nExamples:\n%s", cmd.examples)
	}
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

// parse parses args, turning flag errors into usage errors (exit 2).
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &exitError{2, fmt.Errorf("%v (run xblcall help %s)", err, fs.Name())}
	}
	return nil
}
