package main

import (
	"bytes"
	"strings"
	"testing"
)

// attackConfig is the first message govulncheck v1.9.0 writes (as it wrote it
// here, against an empty offline database: govulncheck -format json).
const attackConfig = `{"config":{"protocol_version":"v1.0.0","scanner_name":"govulncheck","scanner_version":"v1.9.0","db":"file:///tmp/db","go_version":"go1.26.8","scan_level":"symbol","scan_mode":"source"}}`

// attackGate runs the gate on in and returns its error and output.
func attackGate(in string) (string, error) {
	var out bytes.Buffer
	err := gate(strings.NewReader(in), &out)
	return out.String(), err
}

// vulngate's doc: "Command vulngate reads govulncheck's JSON output on
// standard input and fails when the code calls a vulnerable function of a
// module it requires"; RELIABILITY.md, "Known vulnerabilities":
// "internal/vulngate fails the run when the code calls a vulnerable
// function of a module it requires. None does." govulncheck's protocol
// (golang.org/x/vuln internal/govulncheck): "Config must occur as the first
// message of a stream".
//
// Input that holds no govulncheck run at all (nothing; a JSON null; a
// progress message alone: a stream cut before its config) is no evidence
// that nothing vulnerable is called, yet the gate passes it and prints its
// affirmative verdict "no called vulnerability in required modules (0 in
// the standard library)". A verdict must fail closed on such input.
func TestAttackVulngateNoStreamFails(t *testing.T) {
	for _, in := range []string{
		"",
		"null",
		"\n\n",
		`{"progress":{"message":"Fetching vulnerabilities from the database..."}}`,
	} {
		out, err := attackGate(in)
		if err == nil {
			t.Errorf("gate(%q) passed, printing %q; want a failure: this is no govulncheck output (no config message)", in, strings.TrimSpace(out))
		}
	}
}

// vulngate's doc: it "fails when the code calls a vulnerable function of a
// module it requires"; the gate's own comment skips a finding without a
// function as "imported or required only: not called". govulncheck's
// protocol says when that reading holds: "if a scan is at symbol level and
// a finding does not have a symbol it means the vulnerability was imported
// but not called. If the scan however was at "package" level, that
// determination cannot be made."
//
// A stream from govulncheck -scan package (or -scan module) holds no
// function in any finding, whatever the code calls: the gate passes it,
// saying "no called vulnerability in required modules", for a required
// module with a known vulnerability that it never looked into.
func TestAttackVulngatePackageScanLevelFails(t *testing.T) {
	for _, level := range []string{"package", "module", ""} {
		config := strings.Replace(attackConfig, `"scan_level":"symbol"`, `"scan_level":"`+level+`"`, 1)
		in := config +
			`{"finding":{"osv":"GO-2099-0001","fixed_version":"v1.1.0","trace":[{"module":"example.com/m","version":"v1.0.0"}]}}` +
			`{"finding":{"osv":"GO-2099-0001","fixed_version":"v1.1.0","trace":[{"module":"example.com/m","version":"v1.0.0","package":"example.com/m"}]}}`
		out, err := attackGate(in)
		if err == nil {
			t.Errorf("scan_level %q: gate passed, printing %q; want a failure: at that level a finding without a function does not mean the function is not called", level, strings.TrimSpace(out))
		}
	}
}

// vulngate's doc: it "fails when the code calls a vulnerable function of a
// module it requires. Vulnerabilities of the Go standard library are listed
// as warnings". One OSV can cover both the standard library and a module
// (net/http and golang.org/x/net's http2, as GO-2023-2102 and GO-2024-2687
// do), and govulncheck's protocol says "Findings for the same vulnerability
// can be emitted several times" and "There are no guarantees on the order
// of messages".
//
// A called finding in golang.org/x/net followed by one of the same OSV in
// the standard library: the gate keeps the last finding's module per OSV,
// calls the whole OSV a "warning (Go toolchain; upgrade Go)" and passes;
// the same two findings in the other order fail it.
func TestAttackVulngateSameOSVStdlibLastStillFails(t *testing.T) {
	dep := `{"finding":{"osv":"GO-2024-2687","fixed_version":"v0.23.0","trace":[{"module":"golang.org/x/net","version":"v0.22.0","package":"golang.org/x/net/http2","function":"ReadFrame","receiver":"*Framer"},{"module":"example.com/app","package":"example.com/app","function":"main"}]}}`
	std := `{"finding":{"osv":"GO-2024-2687","fixed_version":"go1.22.2","trace":[{"module":"stdlib","version":"go1.22.1","package":"net/http","function":"ReadFrame","receiver":"*http2Framer"},{"module":"example.com/app","package":"example.com/app","function":"main"}]}}`
	for _, order := range []struct{ name, in string }{
		{"module first", attackConfig + dep + std},
		{"stdlib first", attackConfig + std + dep},
	} {
		out, err := attackGate(order.in)
		if err == nil {
			t.Errorf("%s: gate passed, printing %q; want a failure: golang.org/x/net's ReadFrame is called", order.name, strings.TrimSpace(out))
		}
	}
}

// held: a stream cut after a whole message, in the middle of the next one,
// fails ("reading govulncheck output"), as does trailing garbage.
func TestAttackVulngateTruncatedMidStreamFails(t *testing.T) {
	finding := `{"finding":{"osv":"GO-2099-0001","fixed_version":"v1.1.0","trace":[{"module":"example.com/m","version":"v1.0.0","package":"example.com/m","function":"F"}]}}`
	for _, in := range []string{
		attackConfig + finding[:40],
		attackConfig + finding[:len(finding)-1],
		attackConfig + "]",
		attackConfig + `{"finding":{"osv":"GO-1","trace":[{"module":"example.com/m","function":"F"}]}} x`,
	} {
		if out, err := attackGate(in); err == nil {
			t.Errorf("gate(...%q) passed, printing %q; want a failure", in[max(0, len(in)-30):], strings.TrimSpace(out))
		}
	}
}

// held: messages the gate does not read (SBOM, progress, osv entries, a type
// unknown to it) do not hide a called finding of a required module; the
// module, package and symbol findings govulncheck emits for one OSV count
// once.
func TestAttackVulngateOtherMessagesAndRepeats(t *testing.T) {
	in := attackConfig +
		`{"SBOM":{"go_version":"go1.26.8","modules":[{"path":"example.com/m","version":"v1.0.0"}]}}` +
		`{"progress":{"message":"Checking the code against the vulnerabilities..."}}` +
		`{"osv":{"id":"GO-2099-0001","summary":"\u001b[2Kfine"}}` +
		`{"future_message":{"finding":{"osv":"GO-2099-0002"}}}` +
		`{"finding":{"osv":"GO-2099-0001","fixed_version":"v1.1.0","trace":[{"module":"example.com/m","version":"v1.0.0"}]}}` +
		`{"finding":{"osv":"GO-2099-0001","fixed_version":"v1.1.0","trace":[{"module":"example.com/m","version":"v1.0.0","package":"example.com/m"}]}}` +
		`{"finding":{"osv":"GO-2099-0001","fixed_version":"v1.1.0","trace":[{"module":"example.com/m","version":"v1.0.0","package":"example.com/m","function":"F"},{"module":"example.com/app","function":"main"}]}}` +
		`{"finding":{"osv":"GO-2099-0001","fixed_version":"v1.1.0","trace":[{"module":"example.com/m","version":"v1.0.0","package":"example.com/m","function":"G"},{"module":"example.com/app","function":"main"}]}}`
	out, err := attackGate(in)
	if err == nil || !strings.Contains(err.Error(), "1 called vulnerabilities") {
		t.Errorf("gate = %v, want 1 called vulnerability; output:\n%s", err, out)
	}
	if strings.Count(out, "VULNERABLE: GO-2099-0001") != 1 {
		t.Errorf("output lists GO-2099-0001 other than once:\n%s", out)
	}
}

// held: a stream of many messages is read in one pass; a called finding
// at its very end still fails the gate.
func TestAttackVulngateLongStream(t *testing.T) {
	var b strings.Builder
	b.WriteString(attackConfig)
	for range 20000 {
		b.WriteString(`{"finding":{"osv":"GO-2099-0003","trace":[{"module":"example.com/n","version":"v1.0.0","package":"example.com/n"}]}}` + "\n")
	}
	b.WriteString(`{"finding":{"osv":"GO-2099-0004","fixed_version":"v1.1.0","trace":[{"module":"example.com/m","version":"v1.0.0","package":"example.com/m","function":"F"}]}}`)
	if out, err := attackGate(b.String()); err == nil {
		t.Errorf("gate passed; want the last finding to fail it; output:\n%s", out)
	}
}
