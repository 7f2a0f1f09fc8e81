package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Promise (xblcall analyze --help): "--html string   also write a
// self-contained HTML report to this file". With --what-if the run
// accepts --html (it checks the file is writable) and exits with the
// trace's verdict, yet must also write the HTML report: a CI job that
// archives it must not find it missing.
func TestAttack44WhatIfAlsoWritesHTML(t *testing.T) {
	har := attack4GreenHAR(t, 2, 5)
	html := filepath.Join(t.TempDir(), "report.html")
	code, out, errs := xblcall(t, "analyze", "--what-if", "--html", html, har)
	b, err := os.ReadFile(html)
	if err != nil || !strings.Contains(string(b), "<html") {
		t.Errorf("exit %d, --html file %q: %v (%d bytes)\nstdout %.300s\nstderr %.300s", code, html, err, len(b), out, errs)
	}
}
