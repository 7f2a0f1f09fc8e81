// Command vulngate reads govulncheck's JSON output on standard input and
// fails when the code calls a vulnerable function of a module it requires.
// Vulnerabilities of the Go standard library are listed as warnings: they are
// fixed by the toolchain a machine runs, not by this module's dependencies.
//
// It fails closed: input that does not begin with govulncheck's config
// message (nothing, or a stream cut before it) is no verdict; a scan below
// symbol level (govulncheck -scan package or module) cannot tell a called
// function from an imported one, and a run that scans no code (-mode
// query) calls nothing: each config message of the stream must name a
// symbol-level scan of source or of a binary.
//
// Usage: govulncheck -format json ./... | go run ./internal/vulngate
package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"

	"github.com/xblgo/fgrl/internal/safetext"
)

type message struct {
	Config *struct {
		ScanLevel string `json:"scan_level"`
		ScanMode  string `json:"scan_mode"`
	} `json:"config"`
	Finding *struct {
		OSV   string `json:"osv"`
		Fixed string `json:"fixed_version"`
		Trace []struct {
			Module   string `json:"module"`
			Version  string `json:"version"`
			Package  string `json:"package"`
			Function string `json:"function"`
		} `json:"trace"`
	} `json:"finding"`
}

func main() {
	if err := gate(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "vulngate:", err)
		os.Exit(1)
	}
}

// hit is a vulnerability called in one module: one OSV can name the
// standard library and a module both (net/http and golang.org/x/net).
type hit struct{ osv, module string }

// gate reports the called vulnerabilities and returns an error when any is
// outside the standard library.
func gate(r io.Reader, w io.Writer) error {
	dec := json.NewDecoder(r)
	called := map[hit]string{} // -> "module@version in package.function (fixed in ...)"
	configured := false
	for {
		var m message
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return fmt.Errorf("reading govulncheck output: %w", err)
		}
		if !configured && m.Config == nil { // govulncheck's protocol: the config message comes first
			return errors.New("the input does not begin with govulncheck's config message: no govulncheck run to judge")
		}
		if c := m.Config; c != nil { // every run's, when runs share a stream
			if c.ScanLevel != "symbol" {
				return fmt.Errorf("govulncheck scanned at level %s: only a symbol-level scan tells a called function from an imported one", safetext.Quote(c.ScanLevel, 40))
			}
			if c.ScanMode != "source" && c.ScanMode != "binary" {
				return fmt.Errorf("govulncheck ran in mode %s: only a scan of code (source or binary) is a verdict on what it calls", safetext.Quote(c.ScanMode, 40))
			}
			configured = true
		}
		f := m.Finding
		if f == nil || len(f.Trace) == 0 || f.Trace[0].Function == "" {
			continue // imported or required only: not called
		}
		top := f.Trace[0]
		called[hit{f.OSV, top.Module}] = safetext.Clip(fmt.Sprintf("%s@%s in %s.%s (fixed in %s)", top.Module, top.Version, top.Package, top.Function, f.Fixed), 400)
	}
	if !configured {
		return errors.New("no govulncheck output: its config message never came")
	}
	hits := slices.SortedFunc(maps.Keys(called), func(a, b hit) int { return cmp.Or(cmp.Compare(a.osv, b.osv), cmp.Compare(a.module, b.module)) })
	bad := 0
	for _, h := range hits {
		kind := "VULNERABLE"
		if h.module == "stdlib" || h.module == "toolchain" {
			kind = "warning (Go toolchain; upgrade Go)"
		} else {
			bad++
		}
		fmt.Fprintf(w, "%s: %s %s\n", kind, safetext.Clip(h.osv, 60), called[h])
	}
	if bad > 0 {
		return fmt.Errorf("%d called vulnerabilities in required modules", bad)
	}
	fmt.Fprintf(w, "no called vulnerability in required modules (%d in the standard library)\n", len(hits))
	return nil
}
