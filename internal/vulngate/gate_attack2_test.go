package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// attack2Finding is a called finding in a required module: it must fail the gate.
const attack2Finding = `{"finding":{"osv":"GO-2099-0001","fixed_version":"v0.2.0","trace":[{"module":"golang.org/x/net","version":"v0.1.0","package":"golang.org/x/net/http2","function":"ReadFrame","receiver":"*Framer"},{"module":"example.com/app","package":"example.com/app","function":"main"}]}}`

// vulngate's doc: "a scan below symbol level (govulncheck -scan package or
// module) cannot tell a called function from an imported one, so it fails
// too"; RELIABILITY.md: "govulncheck run with -scan package or -scan module
// ... fails: only a symbol-level scan tells a called function from an
// imported one".
//
// Two runs' output in one stream (a script that runs govulncheck twice into
// one pipe), the second at package level: only the first config message is
// read; the second's scan_level is never looked at, and its findings without
// a function are taken as "imported, not called". The gate passes, printing
// "no called vulnerability in required modules".
func TestAttack2VulngateSecondConfigBelowSymbolFails(t *testing.T) {
	pkgConfig := strings.Replace(attackConfig, `"scan_level":"symbol"`, `"scan_level":"package"`, 1)
	in := attackConfig + "\n" + pkgConfig + "\n" +
		`{"finding":{"osv":"GO-2099-0001","fixed_version":"v0.2.0","trace":[{"module":"golang.org/x/net","version":"v0.1.0","package":"golang.org/x/net/http2"}]}}`
	out, err := attackGate(in)
	if err == nil {
		t.Errorf("gate passed, printing %q; want a failure: a second config message says a package-level scan follows, and the gate cannot judge it", strings.TrimSpace(out))
	}
}

// vulngate's doc: "Command vulngate reads govulncheck's JSON output on
// standard input and fails when the code calls a vulnerable function of a
// module it requires"; "input that does not begin with govulncheck's config
// message ... is no verdict"; RELIABILITY.md: "no config is no verdict".
//
// govulncheck -mode query (govulncheck v1.9.0 here, against a one-entry
// offline database naming golang.org/x/net < v0.2.0) writes a config message
// with "scan_level":"symbol" and "scan_mode":"query", then the OSV of the
// module version asked about, and no finding: it looks at no code. The
// gate passes it with "no called vulnerability in required modules", an
// affirmative verdict on code that was never scanned, for a module version
// the same stream says is vulnerable. (This stream is what
// `govulncheck -db file://DB -format json -mode query golang.org/x/net@v0.1.0`
// wrote, reduced to its messages.)
func TestAttack2VulngateQueryModeIsNoVerdict(t *testing.T) {
	in := `{"config":{"protocol_version":"v1.0.0","scanner_name":"govulncheck","scanner_version":"v1.9.0","db":"file:///tmp/attack2106db","db_last_modified":"2026-01-01T00:00:00Z","scan_level":"symbol","scan_mode":"query"}}
{"progress":{"message":"Looking up vulnerabilities in golang.org/x/net at v0.1.0..."}}
{"osv":{"schema_version":"1.3.1","id":"GO-2099-0001","modified":"2026-01-01T00:00:00Z","published":"2026-01-01T00:00:00Z","summary":"test vuln","details":"test","affected":[{"package":{"name":"golang.org/x/net","ecosystem":"Go"},"ranges":[{"type":"SEMVER","events":[{"introduced":"0"},{"fixed":"0.2.0"}]}],"ecosystem_specific":{"imports":[{"path":"golang.org/x/net/http2","symbols":["Framer.ReadFrame"]}]}}]}}
`
	out, err := attackGate(in)
	if err == nil {
		t.Errorf("gate passed a query-mode run (no code scanned), printing %q; want a failure: no code scan, no verdict", strings.TrimSpace(out))
	}
}

// vulngate's doc: it "fails when the code calls a vulnerable function of a
// module it requires"; RELIABILITY.md, held: "messages the gate does not
// read never hide a called finding".
//
// A first message that carries the config and a called finding together:
// the gate takes the config and `continue`s, so the finding in the same
// message is never read and the gate passes. (Every later message is read
// for its finding whatever else it holds; only the first is not.)
func TestAttack2VulngateFindingBesideConfigNotHidden(t *testing.T) {
	in := strings.TrimSuffix(attackConfig, "}") + `,` + strings.TrimPrefix(attack2Finding, "{")
	out, err := attackGate(in)
	if err == nil {
		t.Errorf("gate passed, printing %q; want a failure: the first message holds a called finding of golang.org/x/net", strings.TrimSpace(out))
	}
}

// held: the config message must be first: a finding, a progress message, a
// JSON null, a number or an array before it fails; so does a byte-order
// mark before the stream. Leading whitespace is fine (the stream is JSON
// values separated by white space).
func TestAttack2VulngateConfigFirstHeld(t *testing.T) {
	for _, in := range []string{
		attack2Finding + attackConfig,
		`{"progress":{"message":"x"}}` + attackConfig,
		`null` + attackConfig,
		`1 ` + attackConfig,
		`[] ` + attackConfig,
		"\ufeff" + attackConfig,
		`{"config":{"scan_level":"SYMBOL"}}`,
		`{"config":{"scan_level":"symbol "}}`,
		`{"config":null}` + attackConfig,
	} {
		if out, err := attackGate(in); err == nil {
			t.Errorf("gate(%.60q) passed, printing %q; want a failure", in, strings.TrimSpace(out))
		}
	}
	if _, err := attackGate(" \n\t\r\n" + attackConfig + "\n"); err != nil {
		t.Errorf("leading white space: %v; want a pass", err)
	}
}

// held: after the config, values that are not messages (a number, an
// array, a string) fail the run; a JSON null is skipped and a later called
// finding still fails it.
func TestAttack2VulngateNonObjectsAfterConfig(t *testing.T) {
	for _, v := range []string{`1`, `[]`, `[` + attack2Finding + `]`, `"finding"`, `true`} {
		if out, err := attackGate(attackConfig + v); err == nil {
			t.Errorf("gate(config + %s) passed, printing %q; want a failure", v, strings.TrimSpace(out))
		}
	}
	if _, err := attackGate(attackConfig + `null` + attack2Finding); err == nil {
		t.Error("a called finding after a null passed")
	}
}

// held: only the exact module names govulncheck gives the Go distribution
// ("stdlib", "toolchain") are warnings; "Stdlib", "STDLIB", " stdlib", an
// empty module, or "std" are judged as required modules and fail the gate.
// A module path of 10 KB with control characters is escaped and clipped:
// the output stays bounded and holds no raw control character.
func TestAttack2VulngateModuleNames(t *testing.T) {
	for _, mod := range []string{"Stdlib", "STDLIB", " stdlib", "", "std", "toolchain\u0000"} {
		in := attackConfig + strings.Replace(attack2Finding, `"module":"golang.org/x/net"`, `"module":`+jsonString(mod), 1)
		if out, err := attackGate(in); err == nil {
			t.Errorf("module %q: gate passed, printing %q; want a failure", mod, strings.TrimSpace(out))
		}
	}
	for _, mod := range []string{"stdlib", "toolchain"} {
		in := attackConfig + strings.Replace(attack2Finding, `"module":"golang.org/x/net"`, `"module":"`+mod+`"`, 1)
		if out, err := attackGate(in); err != nil || !strings.Contains(out, "warning") {
			t.Errorf("module %q: gate = %v, output %q; want a warning and a pass", mod, err, out)
		}
	}
	long := "golang.org/x/\x1b[2K\r\n" + strings.Repeat("\u2028a\x07", 3400)
	in := attackConfig + strings.Replace(attack2Finding, `"module":"golang.org/x/net"`, `"module":`+jsonString(long), 1)
	out, err := attackGate(in)
	if err == nil {
		t.Fatal("a called finding with a long module path passed")
	}
	if len(out) > 600 {
		t.Errorf("output is %d bytes for one finding; want it clipped", len(out))
	}
	if strings.ContainsAny(strings.TrimSuffix(out, "\n"), "\x1b\r\n\a\u2028") {
		t.Errorf("output holds a raw control character: %q", out)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s) // escapes control characters; invalid UTF-8 is not used here
	return string(b)
}
