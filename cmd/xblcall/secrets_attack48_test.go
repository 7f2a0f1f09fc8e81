package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const attack48JWT = "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9SeCrEtPaRtOfThEtOkEn"

func attack48File(t *testing.T, name, s string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Promise (README.md, analyze): "Tokens are never printed." (and
// analyze/rules.go's hideOpaque: "a token is never printed"). A member
// name that is a token, in a --rules file (JSON or YAML), a --limits file,
// or the limits a trace names (--trace-limits: trace text), is printed
// whole in the exit text ("line 1: eyJ...: no such field"); the trace's
// limits' revision is printed whole ("judging by the limits the traces
// name (eyJ...)"). A rules file's services[i] value is hidden
// ("[58 bytes hidden] is not a host pattern"): the same token as a
// member name is not.
func TestAttack48AnalyzeExitTextHoldsNoToken(t *testing.T) {
	green := attack4GreenHAR(t, 2, 5)
	entry := `{"startedDateTime":"2026-03-01T20:00:00Z","time":5,"request":{"method":"GET","url":"https://userpresence.xboxlive.com/users/me","headers":[{"name":"Authorization","value":"XBL3.0 x=1;R"}]},"response":{"status":200,"headers":[]}}`
	for _, c := range []struct {
		name string
		args []string
	}{
		{"rules JSON member", []string{"analyze", "--rules", attack48File(t, "r.json", `{"`+attack48JWT+`": 1}`), green}},
		{"rules YAML member", []string{"analyze", "--rules", attack48File(t, "r.yaml", attack48JWT+": 1\n"), green}},
		{"limits member", []string{"analyze", "--limits", attack48File(t, "l.json", `{"`+attack48JWT+`": 1}`), green}},
		{"trace-limits member", []string{"analyze", "--trace-limits", attack48File(t, "tl.har", `{"log":{"_fgrlLimits":{"`+attack48JWT+`":1},"entries":[`+entry+`]}}`)}},
		{"trace-limits revision", []string{"analyze", "--trace-limits", attack48File(t, "tl2.har", `{"log":{"_fgrlLimits":{"revision":"`+attack48JWT+`","rules":[]},"entries":[`+entry+`]}}`)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := xblcall(t, c.args...)
			if i := strings.Index(out+errs, attack48JWT[20:40]); i >= 0 {
				t.Errorf("exit %d; the token is printed: %q", code, strings.TrimSpace(errs))
			}
		})
	}
}

// Promise (README.md, analyze): "Tokens are never printed", and the
// reason's "never quotes a credential" (commit c932268). A HAR entry whose
// startedDateTime holds a credential written with bytes hideOpaque does
// not count as a token's ('*', '!', '$', percent-encoding): the exit text
// and every --format (and -v, --what-if) print up to 40 bytes of it.
func TestAttack48AnalyzeSplitTokenInEveryOutput(t *testing.T) {
	const secret = "M.C532_BAY.0.U.-Cq7Vd8rWkT3m9Xa2*Lp0Qz!Bn4RkYs6HjEw3Tu*Mn7Pq2Vx9!Rb5Wy8Kz$$"
	har := `{"log":{"version":"1.2","entries":[{"startedDateTime":` + fmt.Sprintf("%q", secret) + `,"time":5,"request":{"method":"GET","url":"https://userpresence.xboxlive.com/users/me","headers":[{"name":"Authorization","value":"XBL3.0 x=1;R"}]},"response":{"status":200,"headers":[]}},` +
		`{"startedDateTime":"2026-03-01T20:00:00Z","time":5,"request":{"method":"GET","url":"https://userpresence.xboxlive.com/users/me","headers":[{"name":"Authorization","value":"XBL3.0 x=1;R"}]},"response":{"status":200,"headers":[]}}]}}`
	p := attack48File(t, "t.har", har)
	for _, args := range [][]string{
		{"analyze", p}, {"analyze", "-v", p}, {"analyze", "--format", "json", p}, {"analyze", "--format", "junit", p},
		{"analyze", "--format", "sarif", p}, {"analyze", "--format", "html", p}, {"analyze", "--what-if", p},
	} {
		code, out, errs := xblcall(t, args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (incomplete)", args[1:len(args)-1], code)
		}
		if strings.Contains(out+errs, "Cq7Vd8rWkT3m9Xa2") || strings.Contains(out+errs, "Lp0Qz!B") {
			t.Errorf("%v: exit %d; the credential is printed: %.200s", args[1:len(args)-1], code, strings.TrimSpace(errs))
		}
	}
}
