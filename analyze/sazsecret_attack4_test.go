package analyze_test

// A fourth outside attack on the trace analyzer (atk-analyze4): what a .saz
// session's problem says.

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"
)

// attack4SAZRequest4 writes one session whose request file is req, answered 200.
func attack4SAZRequest4(t *testing.T, req string) []byte {
	t.Helper()
	b := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC).Format(time.RFC3339Nano)
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	for _, f := range [][2]string{
		{"raw/1_c.txt", req},
		{"raw/1_m.xml", `<?xml version="1.0" encoding="utf-8"?><Session SID="1"><SessionTimers ClientBeginRequest="` + b + `" ClientDoneResponse="` + b + `"/></Session>`},
		{"raw/1_s.txt", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"},
	} {
		w, err := z.CreateHeader(&zip.FileHeader{Name: f[0], Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, f[1])
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// held: TestAttack4SAZProblemKeepsNoToken: README/RELIABILITY.md:205-206 and :414
// (a token is never kept or printed: call.go's Call.Authorization "the
// token is never kept or printed"; every trace-sourced text of a report is
// escaped and clipped, and no export holds a token). A .saz request whose
// Authorization line net/http's reader refuses (no colon at all, or a
// control character in the name, as a hand-edited or cut capture holds) is
// a problem whose reason is the reader's error: textproto's is "malformed
// MIME header line: " followed by the line itself, token and all. Held:
// neither the report's JSON nor the input holds the token.
func TestAttack4SAZProblemKeepsNoToken(t *testing.T) {
	const secret = "eyJTOKENSECRETatk4"
	for _, line := range []string{
		"Authorization XBL3.0 x=1;" + secret,
		"Authori\x01zation: XBL3.0 x=1;" + secret,
	} {
		req := "GET https://profile.xboxlive.com/users/me/profile/settings HTTP/1.1\r\nHost: profile.xboxlive.com\r\n" + line + "\r\n\r\n"
		rep, in := attack3AnalyzeSAZ(t, attack4SAZRequest4(t, req))
		if in.Complete() {
			t.Errorf("%q: read whole, want a problem", line)
		}
		var out bytes.Buffer
		if err := json.NewEncoder(&out).Encode(rep); err != nil {
			t.Fatal(err)
		}
		pr, _ := json.Marshal(in)
		for what, s := range map[string]string{"report JSON": out.String(), "input": string(pr)} {
			if i := strings.Index(s, secret[:10]); i >= 0 {
				t.Errorf("%q: the %s holds the token: ...%s...", line, what, s[max(i-80, 0):min(i+30, len(s))])
			}
		}
	}
}
