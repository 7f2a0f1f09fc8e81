package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const attack89Secret = "AtkSeCrEt0123456789abcdefXYZ"

// attack89SecretHAR: a red trace (12 profile reads in 6 s, two 429s in a row)
// whose secret rides in the Authorization token, a Signature header, the
// URL's user info, its query, and a percent-encoded '?' in its path.
func attack89SecretHAR() string {
	var b strings.Builder
	b.WriteString(`{"log": {"version": "1.2", "entries": [`)
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	for i := range 12 {
		if i > 0 {
			b.WriteByte(',')
		}
		st := `{"status": 200}`
		if i >= 10 {
			st = `{"status": 429, "headers": [{"name": "Retry-After", "value": "60"}]}`
		}
		fmt.Fprintf(&b, `{"startedDateTime": %q, "request": {"method": "GET",
		"url": "https://u:%s@profile.xboxlive.com/users/me/profile/settings%%3Faccess_token=%s?sig=%s",
		"headers": [{"name": "Authorization", "value": "XBL3.0 x=55;%s"}, {"name": "Signature", "value": "%s"}]}, "response": %s}`,
			t0.Add(time.Duration(i)*500*time.Millisecond).Format(time.RFC3339Nano), attack89Secret, attack89Secret, attack89Secret, attack89Secret, attack89Secret, st)
	}
	b.WriteString(`]}}`)
	return b.String()
}

// README: "Tokens are never printed." In no format of xblcall analyze,
// nor its --what-if, does a trace's secret reach the output; the trace is
// red: exit 1.
func TestAttack89CLISecretInNoFormat(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.har")
	if err := os.WriteFile(p, []byte(attack89SecretHAR()), 0o600); err != nil {
		t.Fatal(err)
	}
	runs := [][]string{}
	for _, f := range []string{"text", "json", "junit", "sarif", "html"} {
		runs = append(runs, []string{"analyze", "-v", "--format", f, p})
	}
	runs = append(runs, []string{"analyze", "--what-if", p}, []string{"analyze", "--what-if", "--json", p})
	for _, args := range runs {
		var out, errb bytes.Buffer
		code := run(context.Background(), args, &out, &errb, withTestEnv(t))
		all := out.String() + errb.String()
		if code != 1 {
			t.Errorf("%v: exit %d, want 1\n%s", args, code, errb.String())
		}
		if i := strings.Index(all, attack89Secret); i >= 0 {
			t.Errorf("%v: the secret reached the output: ...%s...", args[1:len(args)-1], all[max(0, i-100):i+len(attack89Secret)])
		}
	}
}

// ReadData reads "the trace analyzer's own data files"; the trace analyzer
// files a JSON data file's calls under their endpoint (m_host =
// endpointName). 400 calls under endpoint profile.xboxlive.com in 200 s,
// half logged with an absolute Uri to another host: red to the trace
// analyzer (certification 300), and here? Exit 0 is a pass.
func TestAttack89CLIDataEndpointHostExit(t *testing.T) {
	var b strings.Builder
	b.WriteString(`[{"Endpoint": "profile.xboxlive.com"`)
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	for i := range 400 {
		uri := "/users/me/profile/settings"
		if i%2 == 1 {
			uri = "https://cdn.example.net/users/me/profile/settings"
		}
		ft := uint64(t0.Add(time.Duration(i)*500*time.Millisecond).UnixNano()/100 + 116444736000000000)
		fmt.Fprintf(&b, `, "Call": {"Uri": %q, "XboxUserId": "2533274791234567", "HttpStatusCode": 200, "ReqTimeUTC": %s, "IsGet": true}`, uri, attack89FileTime(ft))
	}
	b.WriteString(`}]`)
	p := filepath.Join(t.TempDir(), "d.json")
	os.WriteFile(p, []byte(b.String()), 0o600)
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"analyze", p}, &out, &errb, withTestEnv(t))
	if code == 0 {
		t.Errorf("exit 0 for a data file the trace analyzer reads red:\n%s", out.String())
	}
}

// held: ReadData: "a header line that spans lines stops reading at once"; the
// package doc: a trace that "ended or broke off inside an entry" is
// incomplete. A CSV data file cut inside its header line (after its
// second field): the package reads it green (TestAttack89EveryCutFailsClosed),
// but xblcall analyze exits non-zero for it (no calls).
func TestAttack89CLICSVCutInHeaderExit(t *testing.T) {
	p := filepath.Join(t.TempDir(), "d.csv")
	os.WriteFile(p, []byte("v1510\n\"Host\",\"Uri\","), 0o600)
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"analyze", p}, &out, &errb, withTestEnv(t))
	if code == 0 {
		t.Errorf("exit 0 for a data file cut in its header line:\n%s%s", out.String(), errb.String())
	}
}

func attack89FileTime(ft uint64) string {
	return fmt.Sprintf("%v", float64frombits(ft))
}

func float64frombits(b uint64) float64 { return math.Float64frombits(b) }
