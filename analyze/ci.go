package analyze

import (
	"cmp"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"hash/fnv"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/xblgo/fgrl/internal/safetext"
)

// RuleInfo describes one rule for the reports CI systems read: a short
// description and the help a reader needs to fix what it found.
type RuleInfo struct {
	ID    string
	Short string
	Help  string
}

// RuleInfos are the rules, in the order reports list them.
var RuleInfos = []RuleInfo{
	{RuleCallFrequency, "Calls to a service past its burst or sustain limit, or near it",
		"A user's calls to one service within 15 s (burst) or 300 s (sustain) reached or neared the service's limit; at the certification figure within 300 s the title fails. Spread the calls out, cache answers, batch users into one call, or pace calls with a local budget (fgrl's transport)."},
	{RuleThrottledCalls, "429 answers, and calls sent before Retry-After passed",
		"The service answered 429 Too Many Requests. One 429 is a warning; 429s in a row, or calls sent before the 429's Retry-After passed, fail: after a 429 a title must wait the Retry-After before calling the service again (XSAPI's fail-fast cache does)."},
	{RuleBurst, "Many calls to a service within a short window",
		"Calls came in a burst. Spread them, or merge them into batch calls."},
	{RuleRepeatedCalls, "The same call again within a short window",
		"The same method, URL and body were sent again soon after: cache the answer, or share one request between the callers (fgrl's CoalesceReads)."},
	{RulePolling, "Identical calls at a steady interval",
		"A call is polled. Subscribe to changes (real-time activity) where the service offers it, or poll at the planner's safe interval (xblcall limits plan)."},
	{RuleSmallBatch, "Batch calls listing few users",
		"A batch call listed fewer users than it could: gather the users and make one call (fgrl's client.Config.BatchWindow)."},
	{RuleBatchFrequency, "Batch calls made often that one call could make",
		"Several batch calls within a short window listed users one call could hold: merge them."},
	{RuleEventsBurst, "Many in-game events within a short window",
		"A title sent 10 or more in-game events within 5 s (the trace analyzer's limit for in-game events): send fewer, or aggregate them into one event."},
	{RuleSampleTitleID, "PlayFab calls for a sample title ID (certification warning XR-003)",
		"The title calls PlayFab with one of the sample title IDs of the SDK samples: a submitted title must use its own title ID (XR-003, Title Quality for Submission)."},
	{RuleNotJudged, "429 answers from hosts no rule of the limits covers",
		"Calls to a host the limits data has no rule for (and no fallback rule the analysis may use) were answered 429. They are not judged, so what failed there is not known: analyze the trace by limits that cover the host (xblcall analyze --limits FILE)."},
	{RuleNoToken, "Calls without an Authorization header",
		"Calls to a judged service carried no XBL token, so whose calls they are cannot be told: they count against no user's limits, and only their 429s are judged (per host, by throttled-calls). Export the trace with its Authorization headers (the token is redacted on reading) to have them judged whole."},
	{RuleIncomplete, "A trace not read whole",
		"A trace could not be read to its end, or some of its entries could not be read as calls (the report names the first entry and byte): the calls read are judged, but the verdict is incomplete, as what was not read may fail. Repair or re-export the trace."},
}

// JUnit's shape, as the Jenkins JUnit schema (junit-10.xsd) declares it.
type (
	junitSuites struct {
		XMLName  xml.Name     `xml:"testsuites"`
		Name     string       `xml:"name,attr"`
		Tests    int          `xml:"tests,attr"`
		Failures int          `xml:"failures,attr"`
		Errors   int          `xml:"errors,attr"`
		Suites   []junitSuite `xml:"testsuite"`
	}
	junitSuite struct {
		Name      string      `xml:"name,attr"`
		Tests     int         `xml:"tests,attr"`
		Failures  int         `xml:"failures,attr"`
		Errors    int         `xml:"errors,attr"`
		Skipped   int         `xml:"skipped,attr"`
		Timestamp string      `xml:"timestamp,attr,omitempty"`
		Cases     []junitCase `xml:"testcase"`
	}
	junitCase struct {
		Name      string        `xml:"name,attr"`
		ClassName string        `xml:"classname,attr"`
		Failure   *junitOutcome `xml:"failure,omitempty"`
		Error     *junitOutcome `xml:"error,omitempty"`
		Skipped   *junitOutcome `xml:"skipped,omitempty"`
	}
	junitOutcome struct {
		Type    string `xml:"type,attr"`
		Message string `xml:"message,attr"`
		Text    string `xml:",chardata"`
	}
)

// WriteJUnit writes the report as JUnit XML for a CI system's test page: a
// test suite per rule, a test case per finding listed (a failing finding a
// failure, a warning a skipped case whose message says so), one more case
// for the rule's findings counted but not listed (a failure when one of
// them fails), and a passing case for a rule that found nothing; in the
// incomplete-trace suite, a case per trace, an error for one not read
// whole. The exit status of
// xblcall analyze does not change with the format.
func (r *Report) WriteJUnit(w io.Writer) error {
	doc := junitSuites{Name: "xblcall analyze"}
	for _, ri := range RuleInfos {
		s := junitSuite{Name: ri.ID}
		if !r.Start.IsZero() {
			s.Timestamp = r.Start.UTC().Format("2006-01-02T15:04:05")
		}
		if ri.ID == RuleIncomplete {
			r.junitInputs(&s, ri)
		}
		for i := range r.Findings {
			f := &r.Findings[i]
			if f.Rule != ri.ID {
				continue
			}
			out := &junitOutcome{Type: f.Level, Message: safetext.Cut(f.Reason, 300), Text: findingText(f, ri)}
			c := junitCase{Name: caseName(f), ClassName: "xblcall.analyze." + cmp.Or(f.Service, f.Host)}
			if f.Level == Fail {
				c.Failure = out
				s.Failures++
			} else {
				out.Message = "warning: " + out.Message
				c.Skipped = out
				s.Skipped++
			}
			s.Cases = append(s.Cases, c)
		}
		if n, fails := r.unlisted(ri.ID); n > 0 {
			msg := unlistedText(n, fails)
			c := junitCase{Name: fmt.Sprintf("%s: %d more findings", ri.ID, n), ClassName: "xblcall.analyze"}
			if fails > 0 {
				c.Failure = &junitOutcome{Type: Fail, Message: msg, Text: msg + "\nhelp: " + ri.Help + "\n"}
				s.Failures++
			} else {
				c.Skipped = &junitOutcome{Type: Warn, Message: "warning: " + msg, Text: msg + "\nhelp: " + ri.Help + "\n"}
				s.Skipped++
			}
			s.Cases = append(s.Cases, c)
		}
		if len(s.Cases) == 0 {
			s.Cases = append(s.Cases, junitCase{Name: ri.ID + ": no finding", ClassName: "xblcall.analyze"})
		}
		s.Tests = len(s.Cases)
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Errors += s.Errors
		doc.Suites = append(doc.Suites, s)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// unlisted returns how many findings of rule the report counts but does not
// list (Report.Findings' bounds), and how many of those fail.
func (r *Report) unlisted(rule string) (n, fails int) {
	n, fails = r.ByRule[rule], r.FailsByRule[rule]
	for i := range r.Findings {
		if f := &r.Findings[i]; f.Rule == rule {
			n--
			if f.Level == Fail {
				fails--
			}
		}
	}
	return max(n, 0), max(fails, 0)
}

// unlistedText says what a report's unlisted findings of a rule are.
func unlistedText(n, fails int) string {
	return fmt.Sprintf("%d more findings (%d failing) counted but not listed: a report lists %d per user, service, rule and level, and %d in all",
		n, fails, maxPerGroupRule, MaxFindings)
}

// junitInputs adds a case per trace to s: an error for one not read whole.
func (r *Report) junitInputs(s *junitSuite, ri RuleInfo) {
	for _, in := range r.Inputs {
		c := junitCase{Name: safetext.Cut(in.Name, 200) + ": read whole", ClassName: "xblcall.analyze.inputs"}
		if gap := in.Gap(); gap != nil {
			c.Name = safetext.Cut(in.Name, 200) + ": not read whole"
			c.Error = &junitOutcome{Type: Incomplete, Message: safetext.Cut(gap.String(), 300),
				Text: fmt.Sprintf("%s\n%d calls read, %d entries not read as calls\nhelp: %s\n", safetext.Cut(gap.String(), 300), in.Calls, in.ProblemCount, ri.Help)}
			s.Errors++
		}
		s.Cases = append(s.Cases, c)
	}
}

// caseName names a finding's test case: who, which service, when.
func caseName(f *Finding) string {
	who := f.User
	if who == "" {
		who = "no user"
	}
	return fmt.Sprintf("%s %s at %s", safetext.Cut(who, 60), cmp.Or(f.Service, f.Host), f.Time.UTC().Format(time.RFC3339))
}

// findingText is a finding's details, for a person reading a CI page.
func findingText(f *Finding, ri RuleInfo) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\nuser: %s\nservice: %s (%s)\ncalls: %d\n", safetext.Cut(f.Reason, 300), safetext.Cut(f.User, 80), f.Service, f.Host, f.Calls)
	if f.URL != "" {
		fmt.Fprintf(&b, "call: %s\n", safetext.Cut(f.URL, 220))
	}
	if len(f.APIs) > 0 {
		fmt.Fprintf(&b, "XSAPI: %s\n", strings.Join(f.APIs, ", "))
	}
	for _, e := range f.Evidence {
		fmt.Fprintf(&b, "  entry %d at %s: status %d\n", e.Index, e.Time.UTC().Format(time.RFC3339Nano), e.Status)
	}
	fmt.Fprintf(&b, "help: %s\n", ri.Help)
	return b.String()
}

// SARIF's shape (2.1.0), the parts this report fills.
type (
	sarifLog struct {
		Schema  string     `json:"$schema"`
		Version string     `json:"version"`
		Runs    []sarifRun `json:"runs"`
	}
	sarifRun struct {
		Tool        sarifTool         `json:"tool"`
		Invocations []sarifInvocation `json:"invocations"`
		Artifacts   []sarifArtifact   `json:"artifacts,omitempty"`
		Results     []sarifResult     `json:"results"`
	}
	sarifInvocation struct {
		ExecutionSuccessful bool                `json:"executionSuccessful"`
		Notifications       []sarifNotification `json:"toolExecutionNotifications,omitempty"`
	}
	sarifNotification struct {
		Level   string    `json:"level"`
		Message sarifText `json:"message"`
	}
	sarifTool struct {
		Driver sarifDriver `json:"driver"`
	}
	sarifDriver struct {
		Name           string      `json:"name"`
		InformationURI string      `json:"informationUri"`
		Rules          []sarifRule `json:"rules"`
	}
	sarifRule struct {
		ID               string            `json:"id"`
		Name             string            `json:"name"`
		ShortDescription sarifText         `json:"shortDescription"`
		FullDescription  sarifText         `json:"fullDescription"`
		Help             sarifText         `json:"help"`
		Default          sarifRuleDefaults `json:"defaultConfiguration"`
	}
	sarifRuleDefaults struct {
		Level string `json:"level"`
	}
	sarifText struct {
		Text string `json:"text"`
	}
	sarifArtifact struct {
		Location sarifArtifactLocation `json:"location"`
	}
	sarifArtifactLocation struct {
		URI   string `json:"uri"`
		Index int    `json:"index"`
	}
	sarifResult struct {
		RuleID              string            `json:"ruleId"`
		RuleIndex           int               `json:"ruleIndex"`
		Level               string            `json:"level"`
		Message             sarifText         `json:"message"`
		Locations           []sarifLocation   `json:"locations,omitempty"`
		PartialFingerprints map[string]string `json:"partialFingerprints"`
		Properties          map[string]any    `json:"properties"`
	}
	sarifLocation struct {
		Physical *sarifPhysical `json:"physicalLocation,omitempty"`
		Logical  []sarifLogical `json:"logicalLocations"`
	}
	sarifPhysical struct {
		Artifact sarifArtifactLocation `json:"artifactLocation"`
		Region   *sarifRegion          `json:"region,omitempty"`
	}
	sarifRegion struct {
		ByteOffset int64 `json:"byteOffset"`
	}
	sarifLogical struct {
		Name               string `json:"name"`
		FullyQualifiedName string `json:"fullyQualifiedName"`
		Kind               string `json:"kind"`
	}
)

// WriteSARIF writes the report as a SARIF 2.1.0 log for code scanning: a
// rule per analyzer rule (its id, description and help), a result per
// finding listed (error for a failing one, warning for a warning) located
// in the trace it came from and at its service, with the XSAPI functions,
// user, calls and entries in its properties, and one result per rule for
// its findings counted but not listed (an error when one of them fails),
// with no location. A trace not read whole is an error result of the
// incomplete-trace rule at the byte where it was not, and an error
// notification of a run that did not succeed.
func (r *Report) WriteSARIF(w io.Writer) error {
	run := sarifRun{Tool: sarifTool{Driver: sarifDriver{Name: "xblcall analyze", InformationURI: "https://github.com/xblgo/fgrl"}}, Results: []sarifResult{}}
	index := map[string]int{}
	for i, ri := range RuleInfos {
		index[ri.ID] = i
		level := "warning"
		if ri.ID == RuleCallFrequency || ri.ID == RuleThrottledCalls || ri.ID == RuleIncomplete {
			level = "error" // the rules that can fail certification, and a trace not read
		}
		run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifRule{ID: ri.ID, Name: ruleName(ri.ID),
			ShortDescription: sarifText{ri.Short}, FullDescription: sarifText{ri.Help}, Help: sarifText{ri.Help}, Default: sarifRuleDefaults{level}})
	}
	run.Invocations = []sarifInvocation{{ExecutionSuccessful: true}}
	for i, in := range r.Inputs {
		run.Artifacts = append(run.Artifacts, sarifArtifact{Location: sarifArtifactLocation{URI: artifactURI(in.Name), Index: i}})
		if gap := in.Gap(); gap != nil {
			run.Results = append(run.Results, r.sarifIncomplete(i, *gap, index[RuleIncomplete]))
			run.Invocations[0].ExecutionSuccessful = false
			run.Invocations[0].Notifications = append(run.Invocations[0].Notifications, sarifNotification{Level: "error",
				Message: sarifText{safetext.Cut(in.Name, 200) + " was not read whole: " + safetext.Cut(gap.String(), 300)}})
		}
	}
	for i := range r.Findings {
		f := &r.Findings[i]
		level := "warning"
		if f.Level == Fail {
			level = "error"
		}
		loc := sarifLocation{Logical: []sarifLogical{{Name: cmp.Or(f.Service, f.Host), FullyQualifiedName: f.Host + "/" + cmp.Or(f.Service, f.Host), Kind: "resource"}}}
		if in := r.inputOf(f); in >= 0 {
			loc.Physical = &sarifPhysical{Artifact: sarifArtifactLocation{URI: artifactURI(r.Inputs[in].Name), Index: in}}
		}
		var entries []int
		for _, e := range f.Evidence {
			entries = append(entries, e.Index)
		}
		h := fnv.New64a()
		fmt.Fprint(h, f.Rule, "\x00", f.User, "\x00", f.Service, "\x00", f.Time.UnixNano())
		msg := safetext.Cut(f.Reason, 300)
		if len(f.APIs) > 0 {
			msg += " (XSAPI: " + strings.Join(f.APIs, ", ") + ")"
		}
		run.Results = append(run.Results, sarifResult{RuleID: f.Rule, RuleIndex: index[f.Rule], Level: level,
			Message: sarifText{msg}, Locations: []sarifLocation{loc},
			PartialFingerprints: map[string]string{"fgrlFinding/v1": strconv.FormatUint(h.Sum64(), 16)},
			Properties: map[string]any{"user": f.User, "service": f.Service, "host": f.Host, "calls": f.Calls,
				"time": f.Time.UTC().Format(time.RFC3339Nano), "apis": nonNil(f.APIs), "entries": nonNil(entries), "url": f.URL}})
	}
	for i, ri := range RuleInfos {
		if n, fails := r.unlisted(ri.ID); n > 0 {
			level := "warning"
			if fails > 0 {
				level = "error"
			}
			run.Results = append(run.Results, sarifResult{RuleID: ri.ID, RuleIndex: i, Level: level, Message: sarifText{unlistedText(n, fails)},
				PartialFingerprints: map[string]string{"fgrlFinding/v1": ri.ID + "/unlisted"},
				Properties:          map[string]any{"findings": n, "fails": fails}})
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(sarifLog{Schema: "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json", Version: "2.1.0", Runs: []sarifRun{run}})
}

// sarifIncomplete is the result for input in not read whole, at gap.
func (r *Report) sarifIncomplete(in int, gap Problem, rule int) sarifResult {
	name := r.Inputs[in].Name
	phys := &sarifPhysical{Artifact: sarifArtifactLocation{URI: artifactURI(name), Index: in}}
	if gap.Offset >= 0 {
		phys.Region = &sarifRegion{ByteOffset: gap.Offset}
	}
	h := fnv.New64a()
	fmt.Fprint(h, RuleIncomplete, "\x00", name, "\x00", gap.Index)
	return sarifResult{RuleID: RuleIncomplete, RuleIndex: rule, Level: "error",
		Message:             sarifText{safetext.Cut(name, 200) + " was not read whole: " + safetext.Cut(gap.String(), 300)},
		Locations:           []sarifLocation{{Physical: phys, Logical: []sarifLogical{}}},
		PartialFingerprints: map[string]string{"fgrlFinding/v1": strconv.FormatUint(h.Sum64(), 16)},
		Properties:          map[string]any{"entry": gap.Index, "offset": gap.Offset, "calls": r.Inputs[in].Calls, "problems": r.Inputs[in].ProblemCount}}
}

// nonNil is s, or an empty slice for nil (JSON [] rather than null).
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// ruleName is a rule id as SARIF names it: "call-frequency" is
// "CallFrequency".
func ruleName(id string) string {
	var b strings.Builder
	for _, p := range strings.Split(id, "-") {
		if p != "" {
			b.WriteString(strings.ToUpper(p[:1]) + p[1:])
		}
	}
	return b.String()
}

// artifactURI is a trace's name, a path of this system in slash form
// (filepath.ToSlash: a Windows path's '\' is '/'), as a relative URI
// reference that net/url reads back as that Path: each byte but letters,
// digits, '/' and "-._~!$&'()*+,;=@" percent-encoded ('%', '#', '?', ':',
// a space, a backslash, non-ASCII), and a leading "//" written "/%2F" (it
// would begin a host). "-" (standard input) stays as it is.
func artifactURI(name string) string {
	const kept = "-._~!$&'()*+,;=@/"
	name = filepath.ToSlash(name)
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', strings.IndexByte(kept, c) >= 0 && !(i == 1 && name[:2] == "//"):
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// inputOf returns the index of the input a finding's first call came from,
// or -1.
func (r *Report) inputOf(f *Finding) int {
	if len(f.Evidence) == 0 {
		return -1
	}
	at := f.Evidence[0].Index
	for i, in := range r.Inputs {
		if at < in.Calls {
			return i
		}
		at -= in.Calls
	}
	return -1
}
