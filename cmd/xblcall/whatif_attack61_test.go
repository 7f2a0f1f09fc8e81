package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const attack61Secret = "eyJSECRETattack61TOKENzz"

// attack61HAR writes a HAR of n presence reads by one user, 100 ms apart, the
// last ten answered 429; when far, the last entry is dated 200 years later.
func attack61HAR(n int, far bool) string {
	var b strings.Builder
	b.WriteString(`{"log":{"version":"1.2","creator":{"name":"atk","version":"1"},"entries":[`)
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		at := t0.Add(time.Duration(i) * 100 * time.Millisecond)
		if far && i == n-1 {
			at = at.AddDate(200, 0, 0)
		}
		st := 200
		if i >= n-10 {
			st = 429
		}
		fmt.Fprintf(&b, `{"startedDateTime":%q,"time":5,"request":{"method":"GET","url":"https://userpresence.xboxlive.com/users/xuid(2533274791234567)?sig=%s","httpVersion":"HTTP/1.1","headers":[{"name":"Authorization","value":"XBL3.0 x=1234;%s"},{"name":"Signature","value":"%s"}],"queryString":[],"cookies":[],"headersSize":-1,"bodySize":0},"response":{"status":%d,"statusText":"","httpVersion":"HTTP/1.1","headers":[{"name":"Retry-After","value":"15"}],"cookies":[],"content":{"size":0,"mimeType":"application/json"},"redirectURL":"","headersSize":-1,"bodySize":0},"cache":{},"timings":{"send":0,"wait":5,"receive":0}}`,
			at.Format(time.RFC3339Nano), "QSIG"+attack61Secret, attack61Secret, "SIGN"+attack61Secret, st)
	}
	b.WriteString(`]}}`)
	return b.String()
}

func attack61Analyze(t *testing.T, har string, args ...string) (int, string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "t.har")
	if err := os.WriteFile(p, []byte(har), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	code := run(ctx, append(append([]string{"analyze", "--what-if"}, args...), p), &out, &errb)
	return code, out.String() + "\n--stderr--\n" + errb.String()
}

// held: "Tokens are never printed." (README) and "Only its userhash is read;
// the token is never kept or printed." (analyze.Call.Authorization): the
// what-if's text and JSON output of a trace whose Authorization carries a
// token print no part of it.
func TestAttack61WhatIfNoToken(t *testing.T) {
	har := attack61HAR(40, false)
	for _, f := range [][]string{nil, {"--format", "json"}} {
		code, out := attack61Analyze(t, har, f...)
		t.Logf("%v: exit %d, %d bytes", f, code, len(out))
		if strings.Contains(out, attack61Secret) && strings.Contains(out, "x=1234;"+attack61Secret) {
			t.Errorf("%v: the Authorization token is printed", f)
		}
		if i := strings.Index(out, attack61Secret); i >= 0 {
			t.Logf("%v: secret-like text at %d: %q", f, i, out[max(0, i-80):min(len(out), i+40)])
		}
	}
}

// held: "Exit status 0 green or yellow, 1 red, 2 for a usage error or a
// trace not read whole (incomplete)" and "A trace not read whole makes both
// verdicts Incomplete": a what-if of a HAR cut short, or with one byte
// corrupted in its middle, never exits 0 nor reports a green/yellow after.
func TestAttack61WhatIfDamaged(t *testing.T) {
	har := attack61HAR(40, false)
	mid := strings.Index(har[len(har)/2:], `"startedDateTime"`) + len(har)/2
	cases := map[string]string{
		"truncated":      har[:len(har)*2/3],
		"corrupt-byte":   har[:mid+3] + "\x00" + har[mid+4:],
		"corrupt-brace":  har[:mid-1] + "}" + har[mid:],
		"trailing-data":  har + `{"log":{}}`,
		"second-entries": strings.TrimSuffix(har, `]}}`) + `],"entries":[]}}`,
	}
	for name, h := range cases {
		code, out := attack61Analyze(t, h, "--format", "json")
		t.Logf("%s: exit %d", name, code)
		if code == 0 || (strings.Contains(out, `"verdict": "green"`) || strings.Contains(out, `"verdict":"green"`)) && code != 2 {
			t.Errorf("%s: exit %d; want 2 (incomplete)\n%.600s", name, code, out)
		}
		if code != 2 && code != 1 {
			t.Errorf("%s: exit %d", name, code)
		}
	}
}

// held: a trace whose calls span more than the longest replay (one entry
// dated 200 years on) fails the what-if: the command does not exit 0.
func TestAttack61WhatIfFarFuture(t *testing.T) {
	code, out := attack61Analyze(t, attack61HAR(40, true))
	t.Logf("exit %d: %.400s", code, out[strings.Index(out, "--stderr--"):])
	if code == 0 {
		t.Errorf("exit 0 for a trace spanning 200 years")
	}
}
