// Command vulngate reads govulncheck's JSON output on standard input and
// fails when the code calls a vulnerable function of a module it requires.
// Vulnerabilities of the Go standard library are listed as warnings: they are
// fixed by the toolchain a machine runs, not by this module's dependencies.
//
// Usage: govulncheck -format json ./... | go run ./internal/vulngate
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
)

type message struct {
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

// gate reports the called vulnerabilities and returns an error when any is
// outside the standard library.
func gate(r io.Reader, w io.Writer) error {
	dec := json.NewDecoder(r)
	called := map[string]string{} // osv -> "module@version (fixed in ...)"
	std := map[string]bool{}
	for {
		var m message
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return fmt.Errorf("reading govulncheck output: %w", err)
		}
		f := m.Finding
		if f == nil || len(f.Trace) == 0 || f.Trace[0].Function == "" {
			continue // imported or required only: not called
		}
		top := f.Trace[0]
		called[f.OSV] = fmt.Sprintf("%s@%s in %s.%s (fixed in %s)", top.Module, top.Version, top.Package, top.Function, f.Fixed)
		std[f.OSV] = top.Module == "stdlib" || top.Module == "toolchain"
	}
	ids := slices.Sorted(maps.Keys(called))
	bad := 0
	for _, id := range ids {
		kind := "VULNERABLE"
		if std[id] {
			kind = "warning (Go toolchain; upgrade Go)"
		} else {
			bad++
		}
		fmt.Fprintf(w, "%s: %s %s\n", kind, id, called[id])
	}
	if bad > 0 {
		return fmt.Errorf("%d called vulnerabilities in required modules", bad)
	}
	fmt.Fprintf(w, "no called vulnerability in required modules (%d in the standard library)\n", len(ids)-bad)
	return nil
}
