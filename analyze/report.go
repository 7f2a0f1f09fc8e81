package analyze

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/throttle"
)

// Verdicts, as the trace analyzer colours them, and Incomplete.
const (
	Green  = "green"  // no finding
	Yellow = "yellow" // warnings only: the title passes, with work to do
	Red    = "red"    // a failure: certification would fail
	// Incomplete is the verdict on traces not read whole (Input.Complete),
	// whatever the calls read: what was not read may fail. It passes no
	// gate.
	Incomplete = "incomplete"
)

// Finding levels.
const (
	Fail = "fail" // decides a red verdict
	Warn = "warn" // a yellow one
)

// Rule names, as findings carry them.
const (
	RuleCallFrequency  = "call-frequency"
	RuleThrottledCalls = "throttled-calls"
	RuleBurst          = "burst"
	RuleRepeatedCalls  = "repeated-calls"
	RulePolling        = "polling"
	RuleSmallBatch     = "small-batch"
	RuleBatchFrequency = "batch-frequency"
	RuleNoToken        = "no-token"
	RuleSampleTitleID  = "sample-title-id"
	RuleEventsBurst    = "events-burst"
	// RuleNotJudged is calls answered 429 at a host no rule of the limits
	// covers: not judged, and so a warning, never a pass unsaid.
	RuleNotJudged = "not-judged"
	// RuleIncomplete is no rule of the calls but of the traces: one not
	// read whole (Input.Complete). Reports for CI list it with the rules,
	// as an error; it makes no Finding.
	RuleIncomplete = "incomplete-trace"
)

// Schema names the JSON shape of a Report; it changes only when a field
// changes meaning or goes away.
const Schema = "fgrl.analyze/v2"

// Report is the analysis of one or more traces. Its JSON form is the
// documented --json output (see the package doc).
type Report struct {
	Schema  string `json:"schema"`
	Verdict string `json:"verdict"` // green, yellow, red, or incomplete
	// Fails and Warnings count the findings of each level, listed or not;
	// Findings lists at most maxPerGroupRule (50) of each rule and level
	// per group, and MaxFindings in all, failures first, then by time.
	// The verdict is of every finding counted.
	Fails    int       `json:"fails"`
	Warnings int       `json:"warnings"`
	Findings []Finding `json:"findings"`
	// ByRule counts the findings of each rule, and FailsByRule the
	// failing ones among them, listed or not.
	ByRule      map[string]int `json:"byRule"`
	FailsByRule map[string]int `json:"failsByRule"`
	Inputs      []Input        `json:"inputs"`
	Calls       int            `json:"calls"`  // calls read
	Judged      int            `json:"judged"` // calls to services judged, with a token
	// NotJudged are the calls to hosts neither the limits nor the rules'
	// services cover, per host: listed, never judged by the rules of
	// calls; a host among them that answered 429 is a not-judged finding.
	NotJudged []HostCount `json:"notJudged"`
	// NoToken are the calls to judged services without an Authorization
	// header, per host, with the 429s among them (judged per host by
	// throttled-calls).
	NoToken  []HostCount `json:"noToken"`
	Realtime int         `json:"realtime"` // real-time activity sockets and shoulder taps, not judged
	// RealtimeMessages are the messages of those sockets a HAR recorded
	// (_webSocketMessages), not judged.
	RealtimeMessages int       `json:"realtimeMessages,omitempty"`
	Start            time.Time `json:"start"`
	End              time.Time `json:"end"`
	Groups           []Group   `json:"groups"` // per user and service, most calls first
	// Limits is the revision of the limits used, with what looks like a
	// credential in it hidden (safetext.HideOpaque): a trace's own limits
	// name theirs.
	Limits string `json:"limits"`
	Rules  *Rules `json:"rules"`
}

// MaxFindings bounds the findings a Report lists (its counts are of all).
const MaxFindings = 5000

// listed gathers a Report's findings: it counts each one and keeps the
// first MaxFindings in the order the Report lists them (failures first,
// then by time, then as found), so that those past them, and their
// evidence, go as the judging goes on: a long trace's findings (up to
// maxPerGroupRule per group, rule and level) are not all held at once.
type listed struct {
	rep   *Report
	found []Finding
}

// countAll counts the findings m holds by rule and level (a judging's
// unlisted ones).
func (l *listed) countAll(m map[ruleLevel]int) {
	for k, n := range m {
		l.count(k.rule, k.level, n)
	}
}

// count counts n findings of rule at level, listed or not.
func (l *listed) count(rule, level string, n int) {
	if n == 0 {
		return
	}
	l.rep.ByRule[rule] += n
	if level == Fail {
		l.rep.FailsByRule[rule] += n
		l.rep.Fails += n
	} else {
		l.rep.Warnings += n
	}
}

func (l *listed) add(fs ...Finding) {
	for _, f := range fs {
		l.count(f.Rule, f.Level, 1)
	}
	l.found = append(l.found, fs...)
	if len(l.found) >= 2*MaxFindings {
		l.cut()
	}
}

// cut keeps the first MaxFindings findings, in a slice of their own, and
// returns them (never nil).
func (l *listed) cut() []Finding {
	all := l.found
	sort.SliceStable(all, func(i, j int) bool {
		if (all[i].Level == Fail) != (all[j].Level == Fail) {
			return all[i].Level == Fail
		}
		return all[i].Time.Before(all[j].Time)
	})
	l.found = make([]Finding, min(len(all), MaxFindings))
	copy(l.found, all)
	return l.found
}

// maxPerGroupRule bounds the findings listed per group, rule and level;
// those past it are counted.
const maxPerGroupRule = 50

// HostCount is a number of calls to one host, and of the 429s among them.
type HostCount struct {
	Host       string `json:"host"`
	Calls      int    `json:"calls"`
	Server429s int    `json:"server429s,omitempty"`
}

// Group is one user's calls to one service (a rule of the limits).
type Group struct {
	User     string `json:"user"`     // how the report names the user: gamertag (XUID), XUID, or the userhash
	Userhash string `json:"userhash"` // '#' and a digest of it when it is not 1 to 20 digits
	XUID     string `json:"xuid,omitempty"`
	Gamertag string `json:"gamertag,omitempty"`
	Service  string `json:"service"` // the rule's scope, or host:<name> for the fallback rule
	Host     string `json:"host"`    // the first host seen
	// The rule's limits and its certification figure (a sustain window
	// holding that many calls fails).
	Burst         int `json:"burstLimit"`
	Sustain       int `json:"sustainLimit"`
	Certification int `json:"certificationLimit"`
	Calls         int `json:"calls"`
	Server429s    int `json:"server429s"`
	// PeakBurst and PeakSustain are the most calls in any 15 s and 300 s.
	PeakBurst   int               `json:"peakBurst"`
	PeakSustain int               `json:"peakSustain"`
	First       time.Time         `json:"first"`
	Last        time.Time         `json:"last"`
	AvgGap      throttle.Duration `json:"avgGap"`
	MinGap      throttle.Duration `json:"minGap"`
	Duplicates  int               `json:"duplicates"` // calls identical to an earlier one
	Fails       int               `json:"fails"`
	Warnings    int               `json:"warnings"`
	Verdict     string            `json:"verdict"`
	// Timeline counts the calls (and the 429s among them) per Bucket from
	// the report's Start: the HTML report draws it. Only the MaxTimelines
	// busiest groups have one (at most 400 buckets each), so that a trace
	// of many users costs no timeline per user.
	Bucket    throttle.Duration `json:"bucket,omitzero"`
	Timeline  []int             `json:"timeline,omitempty"`
	Throttled []int             `json:"throttled,omitempty"`
}

// Finding is one thing a rule found.
type Finding struct {
	Rule    string    `json:"rule"`
	Level   string    `json:"level"` // fail or warn
	Time    time.Time `json:"time"`  // of the first call involved
	User    string    `json:"user"`
	Service string    `json:"service"`
	Host    string    `json:"host"`
	Reason  string    `json:"reason"` // one line
	// Calls counts the calls involved; Evidence lists the first
	// maxEvidence of them.
	Calls    int        `json:"calls"`
	Evidence []Evidence `json:"evidence"`
	// URL is the call repeated, polled or batched, when one is: its method,
	// host and path as judged (decoded), never its query, nor what follows
	// a '?' or '#' the path decodes to (cut there, ending in "...").
	URL string `json:"url,omitempty"`
	// APIs are the XSAPI functions that make the calls involved (the C API
	// of the GDK, the C++ one in parentheses), from the trace analyzer's
	// endpoint-to-API map: those of URL's endpoint when there is one, else
	// of every endpoint the group called; a service's prefix ending in *
	// when the map knows the host but not the endpoint.
	APIs []string `json:"apis,omitempty"`
}

// Evidence is one call a finding involves.
type Evidence struct {
	Index  int       `json:"index"` // in the traces, from 0
	Time   time.Time `json:"time"`
	Status int       `json:"status"`
}

const maxEvidence = 20

// MaxTimelines is how many groups, the busiest, a Report draws timelines
// for.
const MaxTimelines = htmlGroups

// Report analyzes what was added and returns the report.
func (a *Analyzer) Report() *Report {
	rep := &Report{Schema: Schema, Inputs: shownInputs(a.inputs), Calls: a.calls, Realtime: a.realtime, RealtimeMessages: a.realtimeMessages,
		ByRule: map[string]int{}, FailsByRule: map[string]int{}, Limits: shown(safetext.HideOpaque(a.limits.Revision)), Rules: a.rules}
	if p := a.overProblem(); p != nil { // calls added past a bound, with no input after them
		rep.Inputs = append(rep.Inputs, Input{Name: "calls added", Truncated: p.Reason, Stop: p})
	}
	rep.NotJudged, rep.NoToken = hostCounts(a.apart), hostCounts(a.noToken)
	if rep.Inputs == nil {
		rep.Inputs = []Input{}
	}
	apis := apiNames{byURL: map[string][]string{}}
	rep.Groups = make([]Group, 0, len(a.order))
	judged := make([]*group, 0, len(a.order)) // beside rep.Groups
	all := &listed{rep: rep}
	for _, g := range a.order { // one group's calls as recs at a time (Analyzer.callsOf)
		recs := a.callsOf(g)
		rep.Judged += len(recs)
		first, last := time.Unix(0, recs[0].at).UTC(), time.Unix(0, recs[len(recs)-1].at).UTC()
		if rep.Start.IsZero() || first.Before(rep.Start) {
			rep.Start = first
		}
		if last.After(rep.End) {
			rep.End = last
		}
		gr, found, unlisted := a.judge(g, recs)
		apis.name(g, found)
		rep.Groups, judged = append(rep.Groups, gr), append(judged, g)
		all.add(found...)
		all.countAll(unlisted)
	}
	events, unlisted := a.eventFindings()
	all.add(events...)
	all.count(RuleEventsBurst, Warn, unlisted)
	for id, u := range a.samples {
		all.add(Finding{Rule: RuleSampleTitleID, Level: Warn, Host: strings.ToLower(id) + ".playfabapi.com", Time: u.evidence[0].Time,
			Calls: u.calls, Evidence: u.evidence,
			Reason: fmt.Sprintf("%s to PlayFab for the sample title ID %s: certification warning XR-003 (Title Quality for Submission): use the title's own ID", plural(u.calls, "call"), id)})
	}
	all.add(a.notJudgedFindings()...)
	tokenless, past := a.tokenlessFindings()
	all.add(tokenless...)
	all.countAll(past)
	rep.Findings = all.cut()
	sort.Stable(busiestFirst{rep.Groups, judged})
	for i := range rep.Groups[:min(len(rep.Groups), MaxTimelines)] {
		g := &rep.Groups[i]
		bucket, tl, th := timeline(a.callsOf(judged[i]), rep.Start, rep.End)
		g.Bucket, g.Timeline, g.Throttled = throttle.Duration(bucket), tl, th
	}
	rep.Verdict = verdict(rep.Fails, rep.Warnings)
	for _, in := range rep.Inputs {
		if !in.Complete() {
			rep.Verdict = Incomplete
		}
	}
	return rep
}

// Text from the traces in a report (hosts, services, users, URLs, a
// trace's name) is escaped and clipped once, as the report is built
// (safetext.Clip: control characters, terminal escapes among them, and
// invalid UTF-8 written as Go escapes): every output, JSON, text, HTML,
// JUnit and SARIF, carries it as it is, and only cuts it to fit. Reasons
// are clipped as a reader or rule makes them.
const (
	maxShown    = 256 // a host, service, user or name
	maxShownURL = 512 // a call's method and URL (without its query)
)

// shown is s as a report carries it.
func shown(s string) string { return safetext.Clip(s, maxShown) }

// shownInputs is a copy of inputs, each named as a report shows it.
func shownInputs(inputs []Input) []Input {
	out := slices.Clone(inputs)
	for i := range out {
		out[i].Name = shown(out[i].Name)
	}
	return out
}

// busiestFirst sorts groups by their calls, most first, and the groups
// judged with them.
type busiestFirst struct {
	groups []Group
	judged []*group
}

func (b busiestFirst) Len() int           { return len(b.groups) }
func (b busiestFirst) Less(i, j int) bool { return b.groups[i].Calls > b.groups[j].Calls }
func (b busiestFirst) Swap(i, j int) {
	b.groups[i], b.groups[j] = b.groups[j], b.groups[i]
	b.judged[i], b.judged[j] = b.judged[j], b.judged[i]
}
