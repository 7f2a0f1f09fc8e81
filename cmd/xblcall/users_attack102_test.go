package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// attack102UsersHAR is a HAR of 900 calls, one a second, to profile settings
// with Authorization auth.
func attack102UsersHAR(t *testing.T, auth string) string {
	t.Helper()
	var calls []map[string]any
	for i := range 900 {
		calls = append(calls, attack101Entry(float64(i), "https://profile.xboxlive.com/users/me/profile/settings", auth, 200, "", nil))
	}
	return harOf(t, calls)
}

type attack102WhatIf struct {
	Before struct {
		Verdict string `json:"verdict"`
	} `json:"before"`
	After struct {
		Verdict string `json:"verdict"`
	} `json:"after"`
	Calls          int `json:"calls"`
	RefusedLocally int `json:"refusedLocally"`
}

var attack102CLIUserhashes = []string{
	"XBL3.0 x=9;t", "XBL3.0 x=abc;t", "XBL3.0 x=123456789012345678901;t", "XBL3.0 x=ユーザー;t", "XBL3.0 x=;t",
	"XBL3.0 x= abc ;t", "XBL3.0 x=#0123456789abcdef;t", "XBL3.0 x=#0123456789abcde;t", "XBL3.0 x=REDACTED;t",
}

// "a userhash that is not 1 to 20 digits, which may be a token, only by
// '#' and a digest of it" (xblcall analyze --help); RELIABILITY.md "A
// second outside attack on xblcall's verdicts": such a user polling
// profile once a second for 900 s is "red, exit 1, as for a userhash".
// And --what-if ("replay the traces' calls") judges and replays the same
// calls as for x=9: the same verdicts before and after, the same calls.
func TestAttack102UsersCLIFailClosedAndWhatIf(t *testing.T) {
	var ref attack102WhatIf
	for i, auth := range attack102CLIUserhashes {
		har := attack102UsersHAR(t, auth)
		code, rep := attack101JSON(t, har)
		if code != 1 || rep.Verdict != "red" {
			t.Errorf("Authorization %q: analyze exit %d, verdict %s, byRule %v; want red, exit 1, as for x=9", auth, code, rep.Verdict, rep.ByRule)
		}
		code, out, errs := xblcall(t, "analyze", "--what-if", "--json", har)
		var w attack102WhatIf
		if err := json.Unmarshal([]byte(out), &w); err != nil {
			t.Errorf("Authorization %q: --what-if --json: exit %d %v %.300s; want the replay of x=9's calls", auth, code, err, errs)
			continue
		}
		if i == 0 {
			ref = w
			continue
		}
		if w != ref || code != 1 {
			t.Errorf("Authorization %q: --what-if exit %d, %+v; x=9: %+v", auth, code, w, ref)
		}
	}
}

// held: "the same raw value in two traces read together groups as one": the
// two halves of one non-digit user's polling, in two files, read red
// together (either half alone reaches no certification figure).
func TestAttack102UsersCLITwoTracesOneUser(t *testing.T) {
	for _, uh := range []string{"abc", "123456789012345678901", "ユーザー"} {
		var a, b []map[string]any
		for i := range 300 {
			e := attack101Entry(float64(i), "https://profile.xboxlive.com/users/me/profile/settings", "XBL3.0 x="+uh+";t", 200, "", nil)
			if i%2 == 0 {
				a = append(a, e)
			} else {
				b = append(b, e)
			}
		}
		code, rep := attack101JSON(t, harOf(t, a), harOf(t, b))
		if code != 1 || rep.Verdict != "red" || rep.FailsByRule["call-frequency"] == 0 {
			t.Errorf("userhash %q split across two traces: exit %d, verdict %s, byRule %v; want red (one user)", uh, code, rep.Verdict, rep.ByRule)
		}
	}
}

// held: "is neither kept nor shown" (analyze package doc); "a userhash that is
// not 1 to 20 digits, which may be a token, only by '#' and a digest of
// it" (help): the raw value is in no output format, -v, --what-if's, nor
// in errors (stderr).
func TestAttack102UsersCLIRawValueInNoFormat(t *testing.T) {
	const secret = "eyJhbGciOiJSUzI1NiJ9RAWUSERHASHSECRETqqqqqqqqqq"
	for _, auth := range []string{"XBL3.0 x=" + secret + ";t", "XBL3.0 x= " + secret + " ;t", "XBL3.0 x=" + secret + ";" + strings.Repeat("t", 17<<10)} {
		har := attack102UsersHAR(t, auth)
		htmlFile := filepath.Join(t.TempDir(), "r.html")
		for _, args := range [][]string{
			{}, {"-v"}, {"--json"}, {"--format", "junit"}, {"--format", "sarif"}, {"--format", "html"},
			{"--html", htmlFile}, {"--what-if"}, {"--what-if", "--json"}, {"--what-if", "--html", htmlFile},
		} {
			_, out, errs := xblcall(t, append(append([]string{"analyze"}, args...), har)...)
			side, _ := os.ReadFile(htmlFile)
			os.Remove(htmlFile)
			all := out + errs + string(side)
			if strings.Contains(all, secret[16:40]) {
				t.Errorf("%.40q, %v: the raw userhash is in the output", auth, args)
			}
		}
	}
}
