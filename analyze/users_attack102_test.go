package analyze

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/racebuild"
	"github.com/xblgo/fgrl/internal/scaletest"
	"github.com/xblgo/fgrl/internal/xblauth"
)

const attack102Profile = "https://profile.xboxlive.com/users/me/profile/settings"

// attack102Userhashes are the hostile userhashes of the brief: each value is the
// Authorization value sent.
var attack102Userhashes = []struct{ name, auth string }{
	{"digits (control)", "XBL3.0 x=9;t"},
	{"letters", "XBL3.0 x=abc;t"},
	{"21 digits", "XBL3.0 x=123456789012345678901;t"},
	{"unicode", "XBL3.0 x=ユーザー\u00e9;t"},
	{"empty userhash", "XBL3.0 x=;t"},
	{"spaces around", "XBL3.0 x= abc ;t"},
	{"'#'+16 hex", "XBL3.0 x=#0123456789abcdef;t"},
	{"'#'+15 hex", "XBL3.0 x=#0123456789abcde;t"},
	{"REDACTED", "XBL3.0 x=REDACTED;t"},
	{"token 17 KiB, digit userhash", "XBL3.0 x=9;" + strings.Repeat("t", 17<<10)},
}

// attack102Readers read 900 calls, one a second, to profile settings with
// Authorization auth, in each of the package's inputs, and return the
// report.
func attack102Readers(t *testing.T) map[string]func(auth string) *Report {
	report := func(read func(add func(*Call)) (Input, error)) *Report {
		t.Helper()
		a, _ := New(nil, nil)
		in, err := read(a.Add)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		a.AddInput(in)
		return a.Report()
	}
	return map[string]func(string) *Report{
		"Analyzer.Add (as sent)": func(auth string) *Report {
			a, _ := New(nil, nil)
			for i := range 900 {
				a.Add(&Call{Index: i, Time: at(float64(i)), Method: "GET", URL: attack102Profile, Authorization: auth, Status: 200})
			}
			return a.Report()
		},
		"Recorder": func(auth string) *Report {
			a, _ := New(nil, nil)
			i := 0
			rec := &Recorder{Base: attack102OK{}, Now: func() time.Time { return at(float64(i)) }, Add: a.Add}
			cl := &http.Client{Transport: rec}
			for i = 0; i < 900; i++ {
				req, _ := http.NewRequest("GET", attack102Profile, nil)
				req.Header.Set("Authorization", auth)
				resp, err := cl.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			return a.Report()
		},
		"HAR": func(auth string) *Report {
			var b strings.Builder
			b.WriteString(harHead)
			v, _ := json.Marshal(auth)
			for i := range 900 {
				if i > 0 {
					b.WriteString(",")
				}
				fmt.Fprintf(&b, `{"startedDateTime": %q, "request": {"method": "GET", "url": %q, "headers": [{"name": "Authorization", "value": %s}]}, "response": {"status": 200}}`,
					at(float64(i)).Format(time.RFC3339Nano), attack102Profile, v)
			}
			b.WriteString("]}}")
			return report(func(add func(*Call)) (Input, error) { return ReadHAR(strings.NewReader(b.String()), add) })
		},
		"SAZ": func(auth string) *Report {
			var s [][2]string
			for range 900 {
				s = append(s, [2]string{"GET " + attack102Profile + " HTTP/1.1\r\nHost: profile.xboxlive.com\r\nAuthorization: " + auth + "\r\n\r\n", saz200})
			}
			z := sazOf(t, s, nil, nil)
			return report(func(add func(*Call)) (Input, error) { return ReadSAZ(z, z.Size(), add) })
		},
		"data CSV": func(auth string) *Report {
			var b strings.Builder
			b.WriteString(csvHdr)
			q := strings.ReplaceAll("Authorization: "+auth, `"`, `""`)
			for i := range 900 {
				fmt.Fprintf(&b, `"profile.xboxlive.com","%s","","","%s","","","","200","80","%s","true","1","false","0","","false","","","0","","",""`+"\n",
					attack102Profile, q, at(float64(i)).Format("2006-01-02T15:04:05.000Z"))
			}
			return report(func(add func(*Call)) (Input, error) { return ReadData(strings.NewReader(b.String()), add) })
		},
		"data JSON": func(auth string) *Report {
			var b strings.Builder
			b.WriteString(`[{"Endpoint": "profile.xboxlive.com", "Calls": [`)
			v, _ := json.Marshal("Authorization: " + auth)
			for i := range 900 {
				if i > 0 {
					b.WriteString(",")
				}
				fmt.Fprintf(&b, `{"Uri": %q, "RequestHeaders": %s, "HttpStatusCode": 200, "ReqTimeUTC": %s, "IsGet": true}`, attack102Profile, v, fileTimeJSON(at(float64(i))))
			}
			b.WriteString("]}]")
			return report(func(add func(*Call)) (Input, error) { return ReadData(strings.NewReader(b.String()), add) })
		},
	}
}

type attack102OK struct{}

func (attack102OK) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("{}")), Request: req}, nil
}

// "Calls are grouped per user (the Authorization header's userhash; one that
// is not 1 to 20 digits, which may be a token sent in its place, is neither
// kept nor shown: '#' and 16 hex digits of its SHA-256 name the user)"
// (analyze/doc.go); RELIABILITY.md "A second outside attack on xblcall's
// verdicts": a user polling profile once a second for 900 s with a userhash
// that is not 1-20 digits is "red, exit 1, as for a userhash". Every reader,
// every hostile userhash: red, with call-frequency failing.
func TestAttack102UsersFailClosedEveryReader(t *testing.T) {
	racebuild.Skip(t, "six readers, ten userhashes, 900 calls each: 9 s under the detector, no goroutine of its own")
	for rname, read := range attack102Readers(t) {
		for _, uh := range attack102Userhashes {
			rep := read(uh.auth)
			if rep.Verdict != "red" || rep.FailsByRule["call-frequency"] == 0 {
				t.Errorf("%s, userhash %s: verdict %s, call-frequency failures %d, byRule %v, noToken %v; want red as for x=9",
					rname, uh.name, rep.Verdict, rep.FailsByRule["call-frequency"], rep.ByRule, len(rep.NoToken))
			}
		}
	}
}

// held: "one that is not 1 to 20 digits ... '#' and 16 hex digits of its
// SHA-256 name the user" (doc.go): every reader names the same raw value
// by the same key, and different values by different keys.
func TestAttack102UsersSameKeyEveryReader(t *testing.T) {
	racebuild.Skip(t, "six readers, five userhashes, 900 calls each, no goroutine of its own")
	for _, uh := range []string{"abc", "123456789012345678901", "ユーザー", "#0123456789abcde", "REDACTED"} {
		keys := map[string]string{}
		for rname, read := range attack102Readers(t) {
			rep := read("XBL3.0 x=" + uh + ";t")
			for _, g := range rep.Groups {
				keys[rname] = g.Userhash
			}
		}
		want := "#" + xblauth.UserDigest(uh)
		for rname, k := range keys {
			if k != want {
				t.Errorf("userhash %q read by %s: group key %q, want %q", uh, rname, k, want)
			}
		}
	}
}

// held: "A digest so written is its own key" (users.go userKey): a '#' and 16
// lower-case hex digits value is kept as it is; anything else of that shape
// (upper case, 15 or 17 digits) is digested, so two different non-digit
// values never share a group.
func TestAttack102UsersDistinctValuesDistinctGroups(t *testing.T) {
	vals := []string{"abc", "ABC", "abc\u00a0", "#0123456789abcdef", "#0123456789ABCDEF", "#0123456789abcde",
		"#0123456789abcdef0", "REDACTED", "Redacted", "123456789012345678901", "0123456789012345678901", "9a", "a9"}
	var tr trace
	for i := range 30 {
		for j, v := range vals {
			tr = append(tr, Call{Time: at(float64(i) + float64(j)/100), Method: "GET", URL: attack102Profile, Authorization: "XBL3.0 x=" + v + ";t", Status: 200})
		}
	}
	rep := tr.report(t)
	got := map[string]int{}
	for _, g := range rep.Groups {
		got[g.Userhash] += g.Calls
	}
	if len(got) != len(vals) {
		t.Errorf("%d distinct userhashes made %d groups: %v", len(vals), len(got), got)
	}
	for k, n := range got {
		if n != 30 {
			t.Errorf("group %s holds %d calls, want 30", k, n)
		}
	}
}

// held: Crafted: a user who sends another's digest as its userhash groups with it
// (by design), but the report never names the other's raw value.
func TestAttack102UsersCraftedDigestNamesNoRawValue(t *testing.T) {
	const secret = "eyJhbGciOiJSUzI1NiJ9VICTIMtokenAAAAAAAAAAAAAAAA"
	d := "#" + xblauth.UserDigest(secret)
	var tr trace
	for i := range 400 {
		tr = append(tr, Call{Time: at(float64(i)), Method: "GET", URL: attack102Profile, Authorization: "XBL3.0 x=" + secret + ";t", Status: 200})
		tr = append(tr, Call{Time: at(float64(i) + 0.5), Method: "GET", URL: attack102Profile, Authorization: "XBL3.0 x=" + d + ";t", Status: 200})
	}
	rep := tr.report(t)
	if len(rep.Groups) != 1 || rep.Groups[0].Userhash != d {
		t.Logf("note: groups %d (by design the crafted digest joins the victim's group)", len(rep.Groups))
	}
	attack102NoSecret(t, rep, secret)
}

// attack102NoSecret writes rep in every format and looks for s.
func attack102NoSecret(t *testing.T, rep *Report, secrets ...string) {
	t.Helper()
	var out bytes.Buffer
	b, _ := json.Marshal(rep)
	out.Write(b)
	if err := rep.WriteJUnit(&out); err != nil {
		t.Error(err)
	}
	if err := rep.WriteSARIF(&out); err != nil {
		t.Error(err)
	}
	if err := rep.WriteHTML(&out); err != nil {
		t.Error(err)
	}
	for _, s := range secrets {
		for _, probe := range []string{s, s[:min(len(s), 24)], s[max(len(s)-24, 0):]} {
			if strings.Contains(out.String(), probe) {
				t.Errorf("a report holds the raw userhash %.30q", probe)
			}
		}
	}
}

// held: "is neither kept nor shown" (doc.go): the raw non-digit value is in no
// format of the report, from any reader.
func TestAttack102UsersRawValueInNoFormat(t *testing.T) {
	racebuild.Skip(t, "every reader and format, 9 s under the detector, no goroutine of its own")
	const secret = "eyJhbGciOiJSUzI1NiJ9SECRETUSERHASHzzzzzzzzzzzz"
	for rname, read := range attack102Readers(t) {
		for _, auth := range []string{"XBL3.0 x=" + secret + ";t", "XBL3.0 x= " + secret + " ;t", "XBL3.0 x=" + secret + ";" + strings.Repeat("t", 17<<10)} {
			rep := read(auth)
			t.Run(rname, func(t *testing.T) { attack102NoSecret(t, rep, secret) })
		}
	}
}

// A 1 MiB userhash: "What the analysis keeps of a call is copied and cut
// (a host or a userhash to 256 bytes)" and "a call costs at most about 350
// bytes read and 360 in the report" (doc.go). Output and heap bounded, the
// value not shown, and (fail closed) the polling user red.
func TestAttack102UsersHugeUserhash(t *testing.T) {
	racebuild.Skip(t, "heap figures of a 1 MiB userhash")
	huge := strings.Repeat("u", 1<<20)
	a, _ := New(nil, nil)
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	for i := range 900 {
		a.Add(&Call{Index: i, Time: at(float64(i)), Method: "GET", URL: attack102Profile, Authorization: "XBL3.0 x=" + huge + ";t", Status: 200})
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	rep := a.Report()
	runtime.KeepAlive(a)
	if grow := int64(m1.HeapAlloc) - int64(m0.HeapAlloc); grow > 4<<20 {
		t.Errorf("900 calls of a 1 MiB userhash hold %d bytes", grow)
	}
	var out bytes.Buffer
	b, _ := json.Marshal(rep)
	out.Write(b)
	rep.WriteHTML(&out)
	if out.Len() > 1<<20 {
		t.Errorf("report of %d bytes", out.Len())
	}
	if strings.Contains(out.String(), strings.Repeat("u", 64)) {
		t.Error("the report holds the userhash")
	}
	if rep.Verdict != "red" {
		t.Errorf("a 1 MiB userhash polling 900 s: verdict %s, byRule %v, noToken %d; want red as for x=9", rep.Verdict, rep.ByRule, len(rep.NoToken))
	}
}

// held: Superlinear: 100k distinct non-digit users against 10k, each one call:
// near 10x the time (the package's linear-time tests allow 25x).
func TestAttack102UsersManyDistinctLinear(t *testing.T) {
	racebuild.Skip(t, "a linear-time test: 100,000 users, 8 s under the detector")
	mk := func(n int) []Call {
		cs := make([]Call, n)
		for i := range cs {
			cs[i] = Call{Index: i, Time: at(float64(i) / 1000), Method: "GET", URL: attack102Profile, Authorization: fmt.Sprintf("XBL3.0 x=user-%d-tok;t", i), Status: 200}
		}
		return cs
	}
	small, large := mk(10_000), mk(100_000)
	run := func(cs []Call) func() {
		return func() {
			a, _ := New(nil, nil)
			for i := range cs {
				c := cs[i]
				a.Add(&c)
			}
			if rep := a.Report(); len(rep.Groups) != len(cs) {
				t.Errorf("%d users, %d groups", len(cs), len(rep.Groups))
			}
		}
	}
	g := scaletest.Measure(3, run(small), run(large))
	t.Logf("%+v ratio %.1f", g, g.Ratio())
	if g.Ratio() > 25 {
		t.Errorf("10x the users took %.1fx the time", g.Ratio())
	}
}
