package analyze

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/xblgo/fgrl/internal/racebuild"
	"github.com/xblgo/fgrl/internal/scaletest"
	"time"
)

// attack89HAR builds a HAR of n calls by user uhs, call i to url(i), 0.5 s
// apart, with the given User-Agent, status(i).
func attack89HAR(n int, ua string, url func(i int) string, status func(i int) int) string {
	var b strings.Builder
	b.WriteString(harHead)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		st := status(i)
		resp := fmt.Sprintf(`{"status": %d}`, st)
		if st == 429 {
			resp = `{"status": 429, "headers": [{"name": "Retry-After", "value": "30"}]}`
		}
		fmt.Fprintf(&b, `{"startedDateTime": %q, "request": {"method": "GET", "url": %q,
		"headers": [{"name": "Authorization", "value": "XBL3.0 x=77;tok"}, {"name": "User-Agent", "value": %q}]}, "response": %s}`,
			at(float64(i)/2).Format(time.RFC3339Nano), url(i), ua, resp)
	}
	b.WriteString(`]}}`)
	return b.String()
}

func attack89Verdict(t *testing.T, rules *Rules, read func(add func(*Call)) (Input, error)) (*Report, Input) {
	t.Helper()
	a, err := New(nil, rules)
	if err != nil {
		t.Fatal(err)
	}
	in, err := read(a.Add)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	a.AddInput(in)
	return a.Report(), in
}

// TestAttack89IPv4SpellingsSplitOwnService: README/doc: "Rules.UserAgent
// (xblcall analyze --user-agent) names a title's own User-Agent: its calls
// are judged whatever their host"; ReadHAR: an entry "whose URL is not an
// absolute http(s) URL naming a host (... the host a DNS name ...)" is a
// problem, and the urlProblem rationale: "Any other host ... would be
// judged as a host of its own". 127.0.0.1, 2130706433, 0x7f.1, 127.1 and
// 0177.0.0.1 are one host to a browser (WHATWG URL) and to the OS
// resolver; the analyzer judges them as five services. 400 calls in 200 s
// to one service hold its certification figure (10 x 30 = 300): red. Spread
// over five spellings, no group reaches 300.
func TestAttack89IPv4SpellingsSplitOwnService(t *testing.T) {
	rules := DefaultRules()
	rules.UserAgent = "MyTitle/1.0"
	one := attack89HAR(400, rules.UserAgent, func(int) string { return "http://127.0.0.1:8080/v1/things" }, func(int) int { return 200 })
	rep, _ := attack89Verdict(t, rules, func(add func(*Call)) (Input, error) { return ReadHAR(strings.NewReader(one), add) })
	if rep.Verdict != Red {
		t.Fatalf("control: one spelling: verdict %s, want red", rep.Verdict)
	}
	spellings := []string{"127.0.0.1", "2130706433", "0x7f.1", "127.1", "0177.0.0.1"}
	split := attack89HAR(400, rules.UserAgent, func(i int) string { return "http://" + spellings[i%5] + ":8080/v1/things" }, func(int) int { return 200 })
	rep, in := attack89Verdict(t, rules, func(add func(*Call)) (Input, error) { return ReadHAR(strings.NewReader(split), add) })
	if rep.Verdict != Red && rep.Verdict != Incomplete {
		var groups []string
		for _, g := range rep.Groups {
			groups = append(groups, fmt.Sprintf("%s=%d", g.Service, g.Calls))
		}
		t.Errorf("one host in five IPv4 spellings: verdict %s (problems %d), groups %v; want red, or the entries problems (incomplete)", rep.Verdict, in.ProblemCount, groups)
	}
}

// TestAttack89DotSegmentsSplitPresenceWrite: the analyzer decodes a path "As a
// service routes it" (splitURL), and the brief's promise: one service's
// calls are not split so that a breach goes unseen. Presence writes
// (POST .../devices/current/titles/current) have sustain and
// certification 30 in 300 s; the same writes spelled .../titles/./current,
// .../x/../titles/current or .../titles/%2e/current route to the same
// endpoint on any RFC 3986 server, yet are judged as reads (sustain and
// certification 100). 40 writes 7 s apart (273 s) are red; spelled four
// ways, only the plain ten count as writes.
func TestAttack89DotSegmentsSplitPresenceWrite(t *testing.T) {
	build := func(path func(i int) string) string {
		var b strings.Builder
		b.WriteString(harHead)
		for i := range 40 {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"startedDateTime": %q, "request": {"method": "POST", "url": "https://userpresence.xboxlive.com%s",
			"headers": [{"name": "Authorization", "value": "XBL3.0 x=77;tok"}]}, "response": {"status": 200}}`,
				at(float64(i)*7).Format(time.RFC3339Nano), path(i))
		}
		b.WriteString(`]}}`)
		return b.String()
	}
	plain := "/users/xuid(2533274791234567)/devices/current/titles/current"
	dotted := []string{plain, "/users/xuid(2533274791234567)/devices/current/titles/./current",
		"/users/xuid(2533274791234567)/devices/current/x/../titles/current", "/users/xuid(2533274791234567)/devices/current/titles/%2e/current"}
	control, _ := attack89Verdict(t, nil, func(add func(*Call)) (Input, error) {
		return ReadHAR(strings.NewReader(build(func(int) string { return plain })), add)
	})
	rep, in := attack89Verdict(t, nil, func(add func(*Call)) (Input, error) {
		return ReadHAR(strings.NewReader(build(func(i int) string { return dotted[i%4] })), add)
	})
	peak := func(r *Report) (svc string, sustain int) {
		for _, g := range r.Groups {
			if g.PeakSustain > sustain {
				svc, sustain = g.Service, g.PeakSustain
			}
		}
		return
	}
	cs, cp := peak(control)
	ds, dp := peak(rep)
	t.Logf("control: %s, %s peak sustain %d; dotted: %s, %s peak sustain %d, problems %d", control.Verdict, cs, cp, rep.Verdict, ds, dp, in.ProblemCount)
	if rep.Verdict != Incomplete && (dp < cp || ds != cs) {
		t.Errorf("presence writes spelled with ./, x/.. and %%2e: busiest group %s with %d calls in 300 s; the plain spelling puts all %d in %s", ds, dp, cp, cs)
	}
}

// dataJSONEndpoint is a JSON data file of one endpoint named host whose
// calls' Uri are uri(i), n calls 0.5 s apart.
func dataJSONEndpoint(host string, n int, uri func(i int) string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `[{"Endpoint": %q`, host)
	for i := range n {
		fmt.Fprintf(&b, `, "Call": {"Uri": %q, "XboxUserId": "2533274791234567", "HttpStatusCode": 200, "ReqTimeUTC": %s, "IsGet": true}`,
			uri(i), fileTimeJSON(at(float64(i)/2)))
	}
	b.WriteString(`}]`)
	return b.String()
}

// TestAttack89DataJSONEndpointHostVsUri: ReadData reads "the trace analyzer's own
// data files (its -data input)": an endpoint's "first member names the
// endpoint". The trace analyzer files each call under that endpoint
// (ServiceCallItem's m_host = endpointName, m_servicesHistory[m_host]);
// the reader judges the call by its Uri's host instead. 400 profile calls
// in 200 s are red (certification 300); with half of them logged with an
// absolute Uri to another host the two halves are judged apart and the
// verdict is not red, and not incomplete either.
func TestAttack89DataJSONEndpointHostVsUri(t *testing.T) {
	control := dataJSONEndpoint("profile.xboxlive.com", 400, func(int) string { return "/users/me/profile/settings" })
	rep, _ := attack89Verdict(t, nil, func(add func(*Call)) (Input, error) { return ReadData(strings.NewReader(control), add) })
	if rep.Verdict != Red {
		t.Fatalf("control: %s, want red", rep.Verdict)
	}
	for _, other := range []string{"https://social.xboxlive.com/users/me/profile/settings", "https://cdn.example.net/users/me/profile/settings"} {
		doc := dataJSONEndpoint("profile.xboxlive.com", 400, func(i int) string {
			if i%2 == 1 {
				return other
			}
			return "/users/me/profile/settings"
		})
		rep, in := attack89Verdict(t, nil, func(add func(*Call)) (Input, error) { return ReadData(strings.NewReader(doc), add) })
		if rep.Verdict != Red && rep.Verdict != Incomplete {
			t.Errorf("endpoint profile.xboxlive.com, half its calls' Uri %s: verdict %s (problems %d); the trace analyzer files all 400 under profile: red", other, rep.Verdict, in.ProblemCount)
		}
	}
}

// TestAttack89DataCSVHostVsUri: as above for the CSV form, whose Host column
// the trace analyzer reads into m_host (and groups by); the reader takes
// the Uri's host when the Uri is absolute.
func TestAttack89DataCSVHostVsUri(t *testing.T) {
	row := func(i int, uri string) string {
		return fmt.Sprintf(`"profile.xboxlive.com","%s","2533274791234567","","","","","","200","80","%s","true","1","false","0","","false","","","0","","",""`+"\n",
			uri, at(float64(i)/2).UTC().Format("2006-01-02T15:04:05.000Z"))
	}
	var b strings.Builder
	b.WriteString(csvHdr)
	for i := range 400 {
		uri := "https://profile.xboxlive.com/users/me/profile/settings"
		if i%2 == 1 {
			uri = "https://cdn.example.net/users/me/profile/settings"
		}
		b.WriteString(row(i, uri))
	}
	rep, in := attack89Verdict(t, nil, func(add func(*Call)) (Input, error) { return ReadData(strings.NewReader(b.String()), add) })
	if in.Calls != 400 {
		t.Fatalf("read %d calls, problems %v", in.Calls, in.Problems)
	}
	if rep.Verdict != Red && rep.Verdict != Incomplete {
		t.Errorf("Host profile.xboxlive.com on every row, half the Uris at cdn.example.net: verdict %s, notJudged %+v; want red (the Host column's service) or incomplete", rep.Verdict, rep.NotJudged)
	}
}

// TestAttack89EncodedQueryInPathNotInOutput: README "Tokens are never printed";
// Finding.URL quotes "its path, never its query" (keepURL). A token
// written as a percent-encoded '?' in the path (%3Faccess_token=) is
// decoded into the quoted path.
func TestAttack89EncodedQueryInPathNotInOutput(t *testing.T) {
	const secret = "SeCrEtToKeN0123456789abcdef"
	har := attack89HAR(12, "XboxServicesAPI/1", func(int) string {
		return "https://profile.xboxlive.com/users/me/profile/settings%3Faccess_token=" + secret
	}, func(i int) int { return 200 })
	rep, _ := attack89Verdict(t, nil, func(add func(*Call)) (Input, error) { return ReadHAR(strings.NewReader(har), add) })
	var out bytes.Buffer
	json.NewEncoder(&out).Encode(rep)
	rep.WriteSARIF(&out)
	rep.WriteJUnit(&out)
	rep.WriteHTML(&out)
	if strings.Contains(out.String(), secret) {
		i := strings.Index(out.String(), secret)
		t.Errorf("a token after %%3F in the path reached the report: ...%s...", out.String()[max(0, i-80):i+len(secret)])
	}
}

// held: time is linear in the entries for shapes that make many
// groups: one user calling 5k vs 50k distinct *.xboxlive.com hosts (each
// its fallback group), many users of one call each, and long URLs and
// User-Agents. Package doc: "a call costs at most about 350 bytes read and
// 360 in the report (a user and a group of its own)".
func TestAttack89LinearShapes(t *testing.T) {
	racebuild.Skip(t, "times of 5k and 50k calls, three shapes")
	shapes := map[string]func(i int) (url, auth string){
		"one user, a host each": func(i int) (string, string) {
			return fmt.Sprintf("https://h%d.xboxlive.com/x", i), "XBL3.0 x=1;t"
		},
		"a user each": func(i int) (string, string) {
			return "https://profile.xboxlive.com/users/me/profile/settings", fmt.Sprintf("XBL3.0 x=%d;t", i)
		},
		"long urls, a user each": func(i int) (string, string) {
			return fmt.Sprintf("https://profile.xboxlive.com/users/%d/%s", i, strings.Repeat("a", 8000)), fmt.Sprintf("XBL3.0 x=%d%s;t", i, strings.Repeat("u", 250))
		},
	}
	for name, shape := range shapes {
		mk := func(n int) []Call {
			calls := make([]Call, n)
			for i := range calls {
				u, a := shape(i)
				calls[i] = Call{Index: i, Time: at(float64(i) / 1000), Method: "GET", URL: u, Authorization: a, UserAgent: strings.Repeat("U", 600), Status: 200}
			}
			return calls
		}
		analyze := func(calls []Call) {
			a, _ := New(nil, nil)
			for i := range calls {
				a.Add(&calls[i])
			}
			_ = a.Report()
		}
		allocated := func(calls []Call) uint64 {
			runtime.GC()
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			analyze(calls)
			runtime.ReadMemStats(&m1)
			return m1.TotalAlloc - m0.TotalAlloc
		}
		small, large := mk(5000), mk(50000)
		m1, m2 := allocated(small), allocated(large)
		// Alternately, the least time of two runs each (internal/scaletest:
		// CI runs this beside its fuzzing, whose load once made the long
		// URLs' 30.8x), and 40x for 10x the calls (a quadratic analysis
		// would be 100x).
		g := scaletest.Measure(2, func() { analyze(small) }, func() { analyze(large) })
		t.Logf("%s: 5k, then 50k calls: %v; %d B, then %d B (%.1fx alloc)", name, g, m1, m2, float64(m2)/float64(m1))
		if g.Ratio() > 40 && g.Large() > 2*time.Second {
			t.Errorf("%s: 10x the calls: %v", name, g)
		}
		if m2 > 20*m1 {
			t.Errorf("%s: 10x the calls allocated %.1fx", name, float64(m2)/float64(m1))
		}
	}
}
