package main

import (
	"io"
	"os"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// bar is a progress bar on standard error (schollz/progressbar), drawn only
// when standard error is a terminal and cleared when the work ends, so it
// never lands in a log or a pipe. A nil *bar draws nothing.
type bar struct{ pb *progressbar.ProgressBar }

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// newBar returns a bar counting to max on w, or nil when tty is false.
func newBar(w io.Writer, tty bool, max int64, desc, unit string) *bar {
	if !tty {
		return nil
	}
	return &bar{progressbar.NewOptions64(max,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionSetItsString(unit),
		progressbar.OptionSetWidth(30),
		progressbar.OptionShowCount(),
		progressbar.OptionThrottle(100e6),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetRenderBlankState(true),
	)}
}

// set moves the bar to n.
func (b *bar) set(n int64) {
	if b != nil {
		b.pb.Set64(n)
	}
}

// describe shows what the work waits for after the bar's name; "" shows
// the name alone.
func (b *bar) describe(waits string) {
	if b == nil {
		return
	}
	if waits != "" {
		waits = " (" + waits + ")"
	}
	b.pb.Describe("calls" + waits)
}

// add moves the bar on by one.
func (b *bar) add() {
	if b != nil {
		b.pb.Add64(1)
	}
}

// finish clears the bar from the terminal.
func (b *bar) finish() {
	if b != nil {
		b.pb.Finish()
	}
}
