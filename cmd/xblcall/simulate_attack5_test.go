package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/xblgo/fgrl/mock"
)

const (
	attack5User  = "2533274791234567"
	attack5Title = "1234567890"
)

// attack5Write writes a file named name in a new temporary directory.
func attack5Write(t *testing.T, name, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Skip(err) // a file system that takes no such name
	}
	return p
}

// attack5MockCall sends one profile read to the running mock at base, the
// request's Host header host and its path rawPath (sent as written).
func attack5MockCall(t *testing.T, base, host, rawPath string) {
	t.Helper()
	req, err := http.NewRequest("GET", base+rawPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	req.Header.Set("Authorization", mock.Token(attack5User, attack5Title))
	req.Header.Set("x-xbl-contract-version", "3")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// attack5MockCalls is the mock's own record of calls (GET /_fgrl/api/calls):
// the independent count the check's verdict is compared with.
type attack5Call struct {
	Method string `json:"method"`
	URL    string `json:"url"`
	Scope  string `json:"scope"`
	Status int    `json:"status"`
}

func attack5MockCalls(t *testing.T, base string) []attack5Call {
	t.Helper()
	resp, err := http.Get(base + "/_fgrl/api/calls")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var calls []attack5Call
	if err := json.NewDecoder(resp.Body).Decode(&calls); err != nil {
		t.Fatal(err)
	}
	return calls
}

// README.md: "XUIDs and title IDs are checked (decimal, 64 and 32 bits, no
// leading zero) wherever they are given." and "Exit status is ... 2 for a
// usage or input error"; RELIABILITY.md: "refused: a XUID or title ID is
// written with no leading zero, by the one check of identifiers
// (`internal/xblid`), wherever one is taken (files, flags, ...)".
// simulate --title takes anything: "abc", "0123", a 35-bit number and an
// empty string all run the simulation, exit 0.
func TestAttack5SimulateTitleChecked(t *testing.T) {
	t.Parallel()
	for _, title := range []string{"abc", "0123", "99999999999", "-1"} {
		code, out, errs := xblcall(t, "simulate", "--title", title)
		if code != 2 || !strings.Contains(errs, "--title") {
			t.Errorf("simulate --title %q: exit %d, stdout %d bytes, stderr %q; want exit 2 naming --title", title, code, len(out), clip(errs))
		}
	}
}

// TestChartLongAndHostile (svg_test.go): "draws a day-long, many-key
// pattern from a file whose name carries markup: the SVG stays well-formed
// XML". The name is in the chart's title (html.EscapeString), which
// escapes markup but no control character: a pattern file whose name holds
// ESC (a name ls prints as '?') makes an SVG no XML reader takes
// ("illegal character code U+001B").
func TestAttack5SimulateSVGWellFormedForAnyPatternName(t *testing.T) {
	t.Parallel()
	pattern := attack5Write(t, "p\x1b[31mred.csv", "0,profile,"+attack5User+",12\n")
	svg := filepath.Join(t.TempDir(), "out.svg")
	if code, _, errs := xblcall(t, "simulate", "--pattern", pattern, "--svg", svg); code != 0 {
		t.Fatalf("simulate: exit %d: %s", code, errs)
	}
	data, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	if err := xmlError(data); err != nil {
		t.Fatalf("the SVG of a pattern named with ESC is not well-formed XML: %v", err)
	}
}

// RELIABILITY.md ("Secrets and hostile text", and the analyzer's row):
// "every trace-sourced string of a report (..., a trace's name, ...) is
// escaped and clipped once ... so an escape reads `\x1b` in every output";
// "every CLI error is escaped too". simulate escapes the pattern's name in
// its errors ("--pattern: no\x1b[31mRED.csv: cannot open") but prints it
// raw in its report's first line on standard output, ESC and all: a file
// name can recolour or clear the terminal.
func TestAttack5SimulateReportEscapesPatternName(t *testing.T) {
	t.Parallel()
	pattern := attack5Write(t, "p\x1b[2J\x1b[31mred.csv", "0,profile,"+attack5User+",12\n")
	code, out, errs := xblcall(t, "simulate", "--pattern", pattern)
	if code != 0 {
		t.Fatalf("simulate: exit %d: %s", code, errs)
	}
	if strings.ContainsRune(out, 0x1b) {
		first, _, _ := strings.Cut(out, "\n")
		t.Errorf("simulate's report carries the pattern name's ESC raw: %q", first)
	}
}

// README.md: "Exit status is 0 for success, 1 for a failure (a red
// analysis too), 2 for a usage or input error". A pattern naming a service
// the limits do not have is an input error (the file's fault, found before
// any call), but exits 1, the status of a failure. (main_test.go's
// TestBadInputsExit2 asserts this 1, contradicting its own name and the
// README.) It is found only after --har has been truncated: an existing
// trace given as --har is lost to the typo.
func TestAttack5SimulateUnknownServiceIsInputError(t *testing.T) {
	t.Parallel()
	pattern := attack5Write(t, "typo.csv", "0,profil,"+attack5User+",1\n")
	har := attack5Write(t, "keep.har", `{"log":{"version":"1.2","creator":{"name":"x","version":"1"},"entries":[]}}`)
	before, _ := os.ReadFile(har)
	code, _, errs := xblcall(t, "simulate", "--pattern", pattern, "--har", har)
	if code != 2 {
		t.Errorf("simulate of a pattern with an unknown service: exit %d (%s), want 2 (an input error)", code, clip(errs))
	}
	if after, _ := os.ReadFile(har); !bytes.Equal(before, after) {
		t.Errorf("the --har given (%d bytes) was %d bytes after the refused run: the typo lost it", len(before), len(after))
	}
}

// xblcall help check: "--expect stringArray fail unless N calls match:
// '[METHOD ]HOST[/PATH prefix]=N'"; mock.CheckOptions: "Expect fails when
// a filter matches another number of calls". The project takes a host
// with a trailing dot as the host everywhere else (limits' normalizeHost;
// RELIABILITY.md: "a trailing dot or an upper-case host with a port is
// judged as the host"), and the mock served and counted such a call in
// the profile scope. The check's filter compares the host as received:
// 'profile.xboxlive.com=0' passes after a profile call the mock served,
// counted and recorded.
func TestAttack5CheckExpectZeroSeesTrailingDotHost(t *testing.T) {
	t.Parallel()
	base, _ := startMock(t, "--log-format", "off")
	attack5MockCall(t, base, "profile.xboxlive.com.", "/users/me/profile/settings?settings=Gamertag")
	calls := attack5MockCalls(t, base)
	if len(calls) != 1 || calls[0].Scope != "profile" || calls[0].Status != 200 {
		t.Fatalf("the mock's record: %+v; want one profile call served", calls)
	}
	code, out, errs := xblcall(t, "check", "--mock", base, "--expect", "profile.xboxlive.com=0")
	if code != 1 {
		t.Errorf("check --expect profile.xboxlive.com=0 after the mock served %s (scope %s): exit %d, %q %q; want exit 1",
			calls[0].URL, calls[0].Scope, code, out, clip(errs))
	}
}

// The same promise ('[METHOD ]HOST[/PATH prefix]=N'; README.md: "2 for a
// usage ... error"): an --expect written as a URL, the form every other
// command of xblcall takes, is not '[METHOD ]HOST[/PATH]' but is taken,
// its host read as "https:", which no call has: '=0' then passes however
// many calls were made to that URL. A port is taken as part of the host
// alike, and matches nothing either (the record drops the port).
func TestAttack5CheckExpectThatCanMatchNothingRefused(t *testing.T) {
	t.Parallel()
	base, _ := startMock(t, "--log-format", "off")
	attack5MockCall(t, base, "profile.xboxlive.com", "/users/me/profile/settings?settings=Gamertag")
	if calls := attack5MockCalls(t, base); len(calls) != 1 || calls[0].Scope != "profile" {
		t.Fatalf("the mock's record: %+v; want one profile call", calls)
	}
	for _, x := range []string{"GET https://profile.xboxlive.com/users/me/=0", "profile.xboxlive.com:443=0"} {
		if code, out, errs := xblcall(t, "check", "--mock", base, "--expect", x); code == 0 {
			t.Errorf("check --expect %q after a call there: exit 0 %q %q; want a usage error (2) or a failure (1)", x, out, clip(errs))
		}
	}
}

// mock.CallFilter: "PathPrefix matches the start of the path"; limits.Rule:
// paths "Matching ignores case". The mock served these two profile reads
// by its /users/me/profile/settings route (200, scope profile: the path
// percent-decoded and matched without case), but the check compares the
// prefix with the path as sent, still encoded and in its case: 'GET
// profile.xboxlive.com/users/me/=0' passes after both.
func TestAttack5CheckExpectPathPrefixAsServed(t *testing.T) {
	t.Parallel()
	base, _ := startMock(t, "--log-format", "off")
	attack5MockCall(t, base, "profile.xboxlive.com", "/users/%6De/profile/settings?settings=Gamertag")
	attack5MockCall(t, base, "profile.xboxlive.com", "/USERS/ME/profile/settings?settings=Gamertag")
	calls := attack5MockCalls(t, base)
	for _, c := range calls {
		if c.Scope != "profile" || c.Status != 200 {
			t.Fatalf("the mock's record: %+v; want profile calls served", calls)
		}
	}
	if len(calls) != 2 {
		t.Fatalf("the mock's record: %+v; want 2 calls", calls)
	}
	if code, out, errs := xblcall(t, "check", "--mock", base, "--expect", "GET profile.xboxlive.com/users/me/=0"); code != 1 {
		t.Errorf("check --expect 'GET profile.xboxlive.com/users/me/=0' after the mock served 2 reads of /users/me/profile/settings: exit %d %q %q; want 1", code, out, clip(errs))
	}
}

// held: README.md: "`--pattern examples/mixed.csv --client all --coalesce`
// ... a plain client collects 66 429s"; replay.Result: Sent "requests that
// reached the service, retries included", Server429s "429 answers the
// service sent". The figures of simulate --json are checked against the
// HAR of what the service saw (analyze.Recorder at the mock), counted here:
// entries, their 429s, and per key the requests and 429s of each 15 s row.
func TestAttack5SimulateFiguresMatchHAR(t *testing.T) {
	t.Parallel()
	for _, client := range []string{"naive", "xsapi", "fgrl"} {
		har := filepath.Join(t.TempDir(), client+".har")
		code, out, errs := xblcall(t, "simulate", "--pattern", "../../examples/mixed.csv", "--client", client, "--json", "--har", har)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", client, code, errs)
		}
		var res []struct {
			Sent, Server429s int
			Keys             []struct {
				Scope    string
				Requests int
				Rows     []struct{ Requests, Throttled int }
			}
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil || len(res) != 1 {
			t.Fatalf("%s: %v %d", client, err, len(res))
		}
		raw, err := os.ReadFile(har)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Log struct {
				Entries []struct {
					Request struct {
						URL     string
						Headers []struct{ Name, Value string }
					}
					Response struct{ Status int }
				}
			}
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		uhs := regexp.MustCompile(`^XBL3\.0 x=(\d+);`)
		sent, throttled := 0, 0
		perKey := map[string][2]int{} // userhash + host: requests, 429s
		for _, e := range doc.Log.Entries {
			sent++
			key := ""
			for _, h := range e.Request.Headers {
				if h.Name == "Authorization" {
					if m := uhs.FindStringSubmatch(h.Value); m != nil {
						key = m[1]
					}
				}
			}
			key += " " + strings.Split(e.Request.URL, "/")[2]
			v := perKey[key]
			v[0]++
			if e.Response.Status == 429 {
				throttled++
				v[1]++
			}
			perKey[key] = v
		}
		r := res[0]
		if r.Sent != sent || r.Server429s != throttled {
			t.Errorf("%s: simulate says sent %d, 429s %d; the HAR holds %d requests, %d 429s", client, r.Sent, r.Server429s, sent, throttled)
		}
		var got, want []int
		for _, k := range r.Keys {
			rows, th := 0, 0
			for _, row := range k.Rows {
				rows += row.Requests
				th += row.Throttled
			}
			if rows != k.Requests {
				t.Errorf("%s %s: rows sum to %d requests, the key says %d", client, k.Scope, rows, k.Requests)
			}
			got = append(got, k.Requests*100000+th)
		}
		for _, v := range perKey {
			want = append(want, v[0]*100000+v[1])
		}
		if !sameMultiset(got, want) {
			t.Errorf("%s: per key (requests, 429s) %v, the HAR's %v", client, got, want)
		}
	}
}

func sameMultiset(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	n := map[int]int{}
	for _, x := range a {
		n[x]++
	}
	for _, x := range b {
		if n[x]--; n[x] < 0 {
			return false
		}
	}
	return true
}

// held: RELIABILITY.md "Secrets": "HAR files written by the project hold
// no token". simulate --har of the worked example holds the userhash of
// each call, never the token the simulated client sent.
func TestAttack5SimulateHARHoldsNoToken(t *testing.T) {
	t.Parallel()
	har := filepath.Join(t.TempDir(), "t.har")
	if code, _, errs := xblcall(t, "simulate", "--client", "xsapi", "--har", har); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	raw, err := os.ReadFile(har)
	if err != nil {
		t.Fatal(err)
	}
	tok := mock.Token(attack5User, attack5Title)
	_, secret, _ := strings.Cut(tok, ";")
	if len(secret) < 8 || bytes.Contains(raw, []byte(secret)) || bytes.Contains(raw, []byte(secret[:len(secret)/2])) {
		t.Errorf("the HAR holds the simulated token")
	}
	if !bytes.Contains(raw, []byte(";REDACTED")) {
		t.Errorf("the HAR holds no redacted Authorization")
	}
}

// held: README.md: every data file (--pattern among them) "is read
// strictly ...: ... refused whole, and the error says the file, line and
// field, exit 2". A pattern cut mid-line, a bad line between good ones, a
// count past the bound and a time past MaxSpan: exit 2, nothing printed on
// standard output, and the hostile text in the error escaped.
func TestAttack5SimulatePartialPatternFailsClosed(t *testing.T) {
	t.Parallel()
	for name, data := range map[string]string{
		"cut.csv":     "0,profile," + attack5User + ",40,10\n20,presence/write," + attack5User,
		"badline.csv": "0,profile," + attack5User + ",4\n0,profile,\x1b[2J,1\n30,profile," + attack5User + ",4\n",
		"count.csv":   "0,profile," + attack5User + ",2000001\n",
		"time.csv":    "604801,profile," + attack5User + ",1\n",
		"cut.json":    `[{"time":0,"service":"profile","user":"` + attack5User + `","count":4},{"time":1,"serv`,
	} {
		p := attack5Write(t, name, data)
		code, out, errs := xblcall(t, "simulate", "--pattern", p)
		if code != 2 || out != "" || !strings.Contains(errs, "--pattern") || strings.ContainsRune(errs, 0x1b) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 2, nothing, an escaped --pattern error", name, code, clip(out), errs)
		}
	}
}

// held: mock.CheckOptions: "No429 fails when any call was answered 429".
// Eleven profile reads in a burst (limit 10): the mock's own record shows
// the 429, and check --no-429 fails, exit 1, naming it; so does
// --certify --no-429. Upper-case and port-suffixed hosts count for
// --expect (the record drops the port, the filter ignores case).
func TestAttack5CheckNo429SeesMockThrottle(t *testing.T) {
	t.Parallel()
	base, _ := startMock(t, "--log-format", "off")
	hosts := []string{"PROFILE.XBOXLIVE.COM", "profile.xboxlive.com:443"}
	for i := range 11 {
		attack5MockCall(t, base, hosts[i%2], "/users/me/profile/settings?settings=Gamertag")
	}
	n429 := 0
	for _, c := range attack5MockCalls(t, base) {
		if c.Status == 429 {
			n429++
		}
	}
	if n429 == 0 {
		t.Fatal("the mock's record holds no 429")
	}
	for _, args := range [][]string{{"--no-429"}, {"--no-429", "--certify"}, {"--no-429", "--json"}} {
		code, out, errs := xblcall(t, append([]string{"check", "--mock", base}, args...)...)
		if code != 1 || !strings.Contains(out, "429") {
			t.Errorf("check %v after %d 429s: exit %d, %q %q; want exit 1 naming the 429", args, n429, code, clip(out), clip(errs))
		}
	}
	if code, out, errs := xblcall(t, "check", "--mock", base, "--expect", "GET profile.xboxlive.com/users/me/=11"); code != 0 {
		t.Errorf("check --expect ...=11: exit %d %q %q", code, out, clip(errs))
	}
}
