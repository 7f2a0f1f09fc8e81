package analyze

// An outside attack (attack81) on the analyzer's verdicts and CI formats:
// a verdict fails closed when input is partial or damaged.

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

// attack81Red is a red HAR trace: a passing call of user 1, then two 429s in
// a row for user 2 at profile.xboxlive.com (Retry-After 60).
func attack81Red() string {
	return harHead + harOK(0) + ",\n" + har429(1, "") + ",\n" + har429(2, "") + "]}}"
}

// attack81Follow is a HAR trace of user 2: a passing call, a 429 whose
// Retry-After header value is ra, then the same call 2 s later (sent
// 58 s before a Retry-After of 60 passed: red).
func attack81Follow(ra string) string {
	follow := strings.Replace(strings.Replace(harOK(3), "x=1", "x=2", 1), "social.xboxlive.com/users/me/people", "profile.xboxlive.com/users/me/profile/settings", 1)
	return harHead + harOK(0) + ",\n" + strings.Replace(har429(1, ""), `"value": "60"`, `"value": "`+ra+`"`, 1) + ",\n" + follow + "]}}"
}

// attack81Verdict reads a HAR trace and returns its report and input.
func attack81Verdict(t *testing.T, trace string) (*Report, Input) {
	t.Helper()
	a, err := New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	in, err := ReadHAR(strings.NewReader(trace), a.Add)
	if err != nil {
		t.Fatalf("ReadHAR: %v", err)
	}
	in.Name = "capture.har"
	a.AddInput(in)
	return a.Report(), in
}

// TestAttack81RetryAfterListFailsClosed breaks analyze.ReadHAR's and ReadData's
// godoc: an entry "that holds two Authorization, User-Agent or Retry-After
// headers (readers differ on which one counts) is skipped and named in
// Input.Problems" and "a call whose logged headers name Authorization,
// User-Agent or Retry-After twice is a problem". RFC 9110 §5.3: a
// recipient may combine field lines of one name into one value, separated
// by commas, so "Retry-After: 60, 60" is the two headers' combined form
// (WinHTTP, .NET and proxies merge them so). The analyzer reads it as no
// Retry-After at all, the most lenient reading: the call sent 2 s after the
// 429 (before the 60 s any reader that takes a value waits) is not judged,
// and a red trace is yellow, read whole: a gate passes it (exit 0).
func TestAttack81RetryAfterListFailsClosed(t *testing.T) {
	rep, in := attack81Verdict(t, attack81Follow("60"))
	if rep.Verdict != Red {
		t.Fatalf("control: Retry-After 60 then a call 2 s later: verdict %s; want red", rep.Verdict)
	}
	for _, ra := range []string{"60, 60", "60,60", "60, 120"} {
		rep, in = attack81Verdict(t, attack81Follow(ra))
		if rep.Verdict == Green || rep.Verdict == Yellow {
			t.Errorf("HAR Retry-After %q (two Retry-After headers combined): verdict %s, complete %v, findings %v; want red, or incomplete with the entry a problem",
				ra, rep.Verdict, in.Complete(), rep.ByRule)
		}
	}
	// The data file's logged headers: the same.
	user2 := func(row string) string { return strings.Replace(row, `settings","1"`, `settings","2"`, 1) }
	csv := csvHdr + csvLine(0, 200) + strings.Replace(csvLine(1, 429), "Retry-After: 60", "Retry-After: 60, 60", 1) + user2(csvLine(3, 200))
	a, _ := New(nil, nil)
	din, err := ReadData(strings.NewReader(csv), a.Add)
	if err != nil {
		t.Fatal(err)
	}
	a.AddInput(din)
	if rep := a.Report(); rep.Verdict == Green || rep.Verdict == Yellow {
		t.Errorf("CSV data Retry-After \"60, 60\": verdict %s, complete %v, findings %v; want red, or incomplete with the call a problem",
			rep.Verdict, din.Complete(), rep.ByRule)
	}
}

// TestAttack81HostlessURLFailsClosed breaks analyze.ReadHAR's godoc: "An entry
// that lacks a method, URL or start time ... is skipped and named in
// Input.Problems ... Either way the trace is not Complete", and the
// package doc's "What was not read may fail, so no gate passes it". One
// byte taken out of a red trace (the second '/' of "https://", in the 429s'
// URLs) leaves URLs that name no host as net/url reads them
// ("https:/profile.xboxlive.com/..." has Host ""; browsers, as WHATWG
// reads it, send it to profile.xboxlive.com), and the analyzer takes them
// as calls to a host "https", read whole: the two 429s in a row are a
// not-judged warning and the verdict yellow, which passes every gate.
// Likewise a URL whose path is written with backslashes (WHATWG: '/' for
// https) and one that is no URL at all.
func TestAttack81HostlessURLFailsClosed(t *testing.T) {
	red := attack81Red()
	if rep, _ := attack81Verdict(t, red); rep.Verdict != Red {
		t.Fatalf("control: verdict %s; want red", rep.Verdict)
	}
	const u = "https://profile.xboxlive.com/users/me/profile/settings"
	for _, bad := range []string{
		"https:/profile.xboxlive.com/users/me/profile/settings",      // one byte less
		"//profile.xboxlive.com/users/me/profile/settings",           // no scheme
		`https://profile.xboxlive.com\\users\\me\\profile\\settings`, // backslashes (JSON-escaped)
		"profile settings", // no URL at all
	} {
		rep, in := attack81Verdict(t, strings.ReplaceAll(red, u, bad))
		if rep.Verdict == Green || rep.Verdict == Yellow {
			t.Errorf("429s to %q: verdict %s, complete %v, not judged %v, findings %v; want red, or incomplete with the entries problems",
				bad, rep.Verdict, in.Complete(), rep.NotJudged, rep.ByRule)
		}
	}
}

// TestAttack81PercentEncodedHostJudgedApart breaks the package doc's "Calls are
// grouped per user ... and per rule of the limits data (a service scope
// such as "presence/write"). Hosts the limits name ... are judged" (and
// commit f714e17's "a call's path is judged percent-decoded, as the
// transport and the mock match limits"). A host written
// "%70rofile.xboxlive.com" is profile.xboxlive.com to a browser (WHATWG
// percent-decodes a host) and no host at all to net/url (an invalid
// escape); the analyzer judges it as a host of its own under the fallback
// rule, read whole, so two 429s in a row for one user, one of them to that
// spelling, are two single 429s: yellow, where the trace is red.
func TestAttack81PercentEncodedHostJudgedApart(t *testing.T) {
	red := attack81Red()
	trace := strings.Replace(red, "https://profile.xboxlive.com/", "https://%70rofile.xboxlive.com/", 1)
	rep, in := attack81Verdict(t, trace)
	if rep.Verdict == Green || rep.Verdict == Yellow {
		var services []string
		for _, g := range rep.Groups {
			services = append(services, g.Service)
		}
		t.Errorf("two 429s in a row, the first to %%70rofile.xboxlive.com: verdict %s, complete %v, groups %v, findings %v; want red, or incomplete",
			rep.Verdict, in.Complete(), services, rep.ByRule)
	}
}

// TestAttack81SARIFLocatesItsTrace breaks Report.WriteSARIF's godoc: "a result
// per finding ... located in the trace it came from" (and artifactURI's "a
// trace's name as a relative URI"). A trace's name is put in the SARIF
// log's artifactLocation.uri as it is, but for '\' and ' ': a name holding
// '#', '?' or '%' becomes a URI reference naming another file ("t#1.har" is
// the file "t" with a fragment; "a%41.har" is "aA.har"), so code scanning
// puts the failures of one trace on another file, or on none.
func TestAttack81SARIFLocatesItsTrace(t *testing.T) {
	for _, name := range []string{"t#1.har", "run?2.har", "a%41.har", "100%.har"} {
		a, _ := New(nil, nil)
		in, err := ReadHAR(strings.NewReader(attack81Red()), a.Add)
		if err != nil {
			t.Fatal(err)
		}
		in.Name = name
		a.AddInput(in)
		rep := a.Report()
		var b bytes.Buffer
		if err := rep.WriteSARIF(&b); err != nil {
			t.Fatal(err)
		}
		var log struct {
			Runs []struct {
				Artifacts []struct {
					Location struct {
						URI string `json:"uri"`
					} `json:"location"`
				} `json:"artifacts"`
				Results []struct {
					Locations []struct {
						Physical *struct {
							Artifact struct {
								URI string `json:"uri"`
							} `json:"artifactLocation"`
						} `json:"physicalLocation"`
					} `json:"locations"`
				} `json:"results"`
			} `json:"runs"`
		}
		if err := json.Unmarshal(b.Bytes(), &log); err != nil {
			t.Fatal(err)
		}
		var uris []string // the results' locations, then the artifact's
		for _, r := range log.Runs[0].Results {
			if len(r.Locations) > 0 && r.Locations[0].Physical != nil {
				uris = append(uris, r.Locations[0].Physical.Artifact.URI)
			}
		}
		uris = append(uris, log.Runs[0].Artifacts[0].Location.URI)
		for _, uri := range uris {
			u, err := url.Parse(uri)
			switch {
			case err != nil:
				t.Errorf("trace %q: SARIF uri %q is no URI reference: %v", name, uri, err)
			case u.Path != name || u.RawQuery != "" || u.Fragment != "":
				t.Errorf("trace %q: SARIF uri %q names the file %q (query %q, fragment %q); want the trace", name, uri, u.Path, u.RawQuery, u.Fragment)
			}
			break // the first result's location is enough
		}
	}
}

// held: a red trace stays red, read whole, when its times are written in
// other zones (the same instants), or its entries come out of order.
func TestAttack81ZonesAndOrderHeld(t *testing.T) {
	zoned := harHead + harOK(0) + ",\n" + har429(1, "2026-03-01T21:00:01+01:00") + ",\n" + har429(2, "2026-03-01T14:30:02-05:30") + "]}}"
	reversed := harHead + har429(2, "") + ",\n" + harOK(0) + ",\n" + har429(1, "") + "]}}"
	for name, tr := range map[string]string{"zones": zoned, "reversed": reversed} {
		if rep, in := attack81Verdict(t, tr); rep.Verdict != Red || !in.Complete() {
			t.Errorf("%s: verdict %s, complete %v; want red, whole", name, rep.Verdict, in.Complete())
		}
	}
}

// held: ReadHAR's "data after the document" and a field "twice in one
// object" leave a red trace incomplete, never green or yellow: a NUL byte
// after the document, a second document, "time" twice in a 429's entry.
func TestAttack81DamageIncompleteHeld(t *testing.T) {
	red := attack81Red()
	for name, tr := range map[string]string{
		"NUL after":       red + "\x00",
		"two documents":   red + red,
		"time twice":      strings.Replace(red, `{"startedDateTime": "2026-03-01T20:00:01Z"`, `{"time": 10, "time": 5000, "startedDateTime": "2026-03-01T20:00:01Z"`, 1),
		"status a string": strings.Replace(red, `"status": 429`, `"status": "429"`, 1),
	} {
		if rep, _ := attack81Verdict(t, tr); rep.Verdict != Incomplete && rep.Verdict != Red {
			t.Errorf("%s: verdict %s; want incomplete or red", name, rep.Verdict)
		}
	}
}
