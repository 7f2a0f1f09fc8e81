package analyze_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/xblgo/fgrl/analyze"
)

// attack48Leak returns the longest piece of secret (at least 12 bytes) out
// holds, or "".
func attack48Leak(out, secret string) string {
	best := ""
	for i := range len(secret) {
		for j := i + max(len(best)+1, 12); j <= len(secret); j++ {
			if !strings.Contains(out, secret[i:j]) {
				break
			}
			best = secret[i:j]
		}
	}
	return best
}

// Credentials written with separators outside hideOpaque's alphabet: a
// URL- or form-encoded base64 ticket (RPS "t=" tickets and SAS "sig="
// values are base64 whose '+', '/' and '=' are sent as %2B, %2F, %3D),
// and an opaque token whose alphabet has '*', '!' and '$'.
var attack48SplitTokens = []struct{ name, secret string }{
	{"percent-encoded base64", "t%3DEwB4A8l6BAAUkXz0Jq3%2BmLp9Rt5YwQa1Nc8%2FVb6Hj2Kd4Ms7Px%2BQw%3D"},
	{"token with * ! $", "M.C532_BAY.0.U.-Cq7Vd8rWkT3m9Xa2*Lp0Qz!Bn4RkYs6HjEw3Tu*Mn7Pq2Vx9!Rb5Wy8Kz$$"},
}

// Promise (commit c932268, RELIABILITY.md, analyze/rules.go): "a problem's
// reason never quotes a credential ... a token is never printed (README:
// "Tokens are never printed")". hideOpaque hides runs of 24 or more bytes
// of letters, digits and "+/-_="; a credential written with other bytes
// between shorter runs (percent-encoding of base64's "+/=", '*', '!')
// comes back in the reason, up to the 60-byte clip, in every output.
// Places: a HAR entry's startedDateTime, a .saz session's
// ClientBeginRequest and a data file's HttpStatusCode (the shifted column
// of TestAttack44...).
func TestAttack48SplitTokenNotInProblemReason(t *testing.T) {
	for _, tok := range attack48SplitTokens {
		readers := map[string]func(add func(*analyze.Call)) (analyze.Input, error){
			"HAR startedDateTime": func(add func(*analyze.Call)) (analyze.Input, error) {
				har := `{"log":{"version":"1.2","entries":[{"startedDateTime":` + fmt.Sprintf("%q", tok.secret) + `,"time":5,"request":{"method":"GET","url":"https://userpresence.xboxlive.com/users/me","headers":[]},"response":{"status":200,"headers":[]}}]}}`
				return analyze.ReadHAR(strings.NewReader(har), add)
			},
			"data HttpStatusCode": func(add func(*analyze.Call)) (analyze.Input, error) {
				data := `[{"Endpoint":"userpresence.xboxlive.com","Calls":[{"Uri":"https://userpresence.xboxlive.com/users/me","XboxUserId":"2533274791234567",` +
					`"HttpStatusCode":` + fmt.Sprintf("%q", tok.secret) + `,"ElapsedCallTimeMs":80,"ReqTimeUTC":1.5e-300,"IsGet":true}]}]`
				return analyze.ReadData(strings.NewReader(data), add)
			},
			"SAZ ClientBeginRequest": func(add func(*analyze.Call)) (analyze.Input, error) {
				z := attack48SAZ(t, map[string]string{
					"raw/1_c.txt": "GET https://userpresence.xboxlive.com/users/me HTTP/1.1\r\nHost: userpresence.xboxlive.com\r\n\r\n",
					"raw/1_m.xml": `<Session><SessionTimers ClientBeginRequest="` + tok.secret + `"/></Session>`})
				return analyze.ReadSAZ(bytes.NewReader(z), int64(len(z)), add)
			},
		}
		for where, read := range readers {
			t.Run(tok.name+" in "+where, func(t *testing.T) {
				rep := attack44Report(t, read)
				out := attack44Outputs(t, rep)
				if l := attack48Leak(out, tok.secret); l != "" {
					t.Errorf("verdict %s; the report quotes %d bytes of the credential: %q (problems %v)", rep.Verdict, len(l), l, rep.Inputs[0].Problems)
				}
			})
		}
	}
}

// Promise (README.md, analyze): "Tokens are never printed." and
// xblauth.UserHash's godoc: "Parse takes any userhash without a space or
// ';', so that a call is keyed by whatever its client sends; what a record
// or a log keeps is this one only" (1 to 20 decimal digits). A data file's
// XboxUserId is taken as the user whatever it holds (up to 64 bytes, no
// space or ';'): a shifted column putting a bare token there prints the
// token whole as the user of every finding, in every output (a HAR's
// Authorization "XBL3.0 x=<token>;..." is not: Redact keeps digits only).
func TestAttack48DataXboxUserIdTokenNotInFindings(t *testing.T) {
	const tok = "eyJhbGciOiJSUzI1NiJ9SeCrEtPaRtOfThEtOkEn"
	head := "v1510\n" + `"Host","Uri","XboxUserId","MultiplayerCorrelationId","RequestHeaders","RequestBody","ResponseHeaders","ResponseBody","HttpStatusCode","EllapsedCallTimeMs","ReqTimeUTC","IsGet"` + "\n"
	var rows strings.Builder
	for i := range 5 {
		fmt.Fprintf(&rows, `"userpresence.xboxlive.com","https://userpresence.xboxlive.com/users/me","%s","","","","","","200","80","2026-03-01T20:00:00.%d00Z","true"`+"\n", tok, i)
	}
	rep := attack44Report(t, func(add func(*analyze.Call)) (analyze.Input, error) {
		return analyze.ReadData(strings.NewReader(head+rows.String()), add)
	})
	if l := attack48Leak(attack44Outputs(t, rep), tok); l != "" {
		t.Errorf("verdict %s, %d findings; the report prints %d bytes of the token in XboxUserId: %q", rep.Verdict, len(rep.Findings), len(l), l)
	}
}

// held: a problem whose reason hides a token still fails closed: verdict
// incomplete, a JUnit error and a SARIF error-level result for the trace
// not read whole, with a green call beside it.
func TestAttack48HiddenReasonFailsClosed(t *testing.T) {
	const secret = "XBL3.0 x=123;eyJhbGciOiJSUzI1NiJ9SeCrEtPaRtOfThEtOkEn"
	har := `{"log":{"version":"1.2","entries":[` +
		`{"startedDateTime":"2026-03-01T20:00:00Z","time":5,"request":{"method":"GET","url":"https://userpresence.xboxlive.com/users/me","headers":[{"name":"Authorization","value":"XBL3.0 x=1;R"}]},"response":{"status":200,"headers":[]}},` +
		`{"startedDateTime":` + fmt.Sprintf("%q", secret) + `,"time":5,"request":{"method":"GET","url":"https://userpresence.xboxlive.com/users/me","headers":[]},"response":{"status":200,"headers":[]}}]}}`
	rep := attack44Report(t, func(add func(*analyze.Call)) (analyze.Input, error) {
		return analyze.ReadHAR(strings.NewReader(har), add)
	})
	if rep.Verdict != analyze.Incomplete {
		t.Errorf("verdict %s, want incomplete", rep.Verdict)
	}
	var junit, sarif bytes.Buffer
	rep.WriteJUnit(&junit)
	rep.WriteSARIF(&sarif)
	sarifText := strings.ReplaceAll(sarif.String(), " ", "")
	if !strings.Contains(junit.String(), "<error") || !strings.Contains(sarifText, `"level":"error"`) {
		t.Errorf("JUnit or SARIF does not fail (JUnit <error: %v, SARIF level error: %v)", strings.Contains(junit.String(), "<error"), strings.Contains(sarifText, `"level":"error"`))
	}
	if out := attack44Outputs(t, rep); !strings.Contains(out, "bytes hidden]") && !strings.Contains(out, "bytes, not shown)") {
		t.Error("the reason shows no hidden run")
	}
	if l := attack48Leak(attack44Outputs(t, rep), secret); strings.Contains(l, "SeCrEt") {
		t.Errorf("leak %q", l)
	}
}
