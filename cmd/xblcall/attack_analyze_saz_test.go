package main

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestAttackAnalyzeSAZBackslashAnswersExitZero: xblcall analyze's exit codes,
// "0 pass, 1 fail, 2 no trace": a Fiddler archive whose two sessions'
// answers, both 429, are stored as raw\N_s.txt (archive/zip's
// zip.Reader.Open reads each as raw/N_s.txt; with raw/ it exits 1) is
// read whole, its sessions without an answer, and exits 0: a gate passes
// two 429s in a row.
func TestAttackAnalyzeSAZBackslashAnswersExitZero(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	write := func(name, answer string) string {
		var buf bytes.Buffer
		z := zip.NewWriter(&buf)
		for n := 1; n <= 2; n++ {
			b := t0.Add(time.Duration(n) * time.Second).Format(time.RFC3339Nano)
			for _, f := range [][2]string{
				{fmt.Sprintf("raw/%d_c.txt", n), "GET https://profile.xboxlive.com/users/me/profile/settings HTTP/1.1\r\nHost: profile.xboxlive.com\r\nAuthorization: XBL3.0 x=1;tok\r\n\r\n"},
				{fmt.Sprintf("raw/%d_m.xml", n), `<?xml version="1.0" encoding="utf-8"?><Session SID="1"><SessionTimers ClientBeginRequest="` + b + `"/></Session>`},
				{fmt.Sprintf(answer, n), "HTTP/1.1 429 Too Many Requests\r\nContent-Length: 0\r\n\r\n"},
			} {
				w, err := z.CreateHeader(&zip.FileHeader{Name: f[0], Method: zip.Store})
				if err != nil {
					t.Fatal(err)
				}
				io.WriteString(w, f[1])
			}
		}
		if err := z.Close(); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, buf.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"analyze", write("control.saz", "raw/%d_s.txt")}, &out, &errb, withTestEnv(t)); code != 1 {
		t.Fatalf("control: two 429s in a row: exit %d, want 1\n%s%s", code, out.String(), errb.String())
	}
	out.Reset()
	errb.Reset()
	code := run(context.Background(), []string{"analyze", write("hostile.saz", `raw\%d_s.txt`)}, &out, &errb, withTestEnv(t))
	t.Logf("exit %d\n%s%s", code, out.String(), errb.String())
	if code == 0 {
		t.Errorf("two 429s in a row, their answers stored as raw\\N_s.txt: exit 0 (pass), want 1 or an incomplete trace's exit")
	}
}
