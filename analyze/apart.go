package analyze

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/limits"
)

// Calls listed apart: to hosts no rule of the limits covers (not judged),
// and without a token. Neither passes unsaid: each host is counted, and a
// 429 from a host not judged is a not-judged finding of its own, so that
// limits which cover none of a trace's hosts never make a red trace green.
// Calls without a token count against no user's limits (whose they are
// cannot be told, and merging every user's calls would multiply the
// findings), but a 429 is the service's verdict on a call whoever sent
// it: the throttled-calls rule judges them per host, as if one user's (a
// browser's HAR, which Chrome exports without Authorization, holds one
// user's calls). The other rules count per user, and do not judge them.

// hostTally counts the calls to one host the Analyzer lists apart, and the
// 429s among them.
type hostTally struct {
	calls, throttled int
	evidence         []Evidence // the first maxEvidence 429s, of a host not judged
	recs             []rec      // the calls without a token, judged by throttled-calls
}

// maxHosts bounds the hosts an Analyzer lists apart, in each list: the
// calls to others are counted under otherHosts.
const maxHosts = 10_000

const otherHosts = "(other hosts)"

// maxKeptText bounds each string an Analyzer keeps of a call beyond the
// call (a host, a userhash), cut as safetext.Cut cuts: a host name is at
// most 253 bytes and a userhash 20 digits, so only hostile text loses any.
// What is kept is a copy: never a part of a reader's string, which would
// keep the whole of it.
const maxKeptText = 256

// keep returns s as the Analyzer keeps it: cut to maxKeptText, copied.
func keep(s string) string { return strings.Clone(safetext.Cut(s, maxKeptText)) }

// The names groups keep are shared, so that a group per call (a trace of
// many users) costs no copy of its host and scope: the first maxHosts
// hosts' copies, and their fallback scopes ("host:" and the host), are
// made once; past them, each group has its own. Rule scopes are made once
// per rule of the limits.

// keptHost returns host as kept (keep), shared.
func (a *Analyzer) keptHost(host string) string {
	host = safetext.Cut(host, maxKeptText)
	if s, ok := a.hosts[host]; ok {
		return s
	}
	s := strings.Clone(host)
	if len(a.hosts) < maxHosts {
		a.hosts[s] = s
	}
	return s
}

// hostScope returns the scope of a call to host judged by a fallback rule:
// "host:" and host as kept, shared.
func (a *Analyzer) hostScope(host string) string {
	host = safetext.Cut(host, maxKeptText)
	if s, ok := a.hostScopes[host]; ok {
		return s
	}
	s := "host:" + host
	if len(a.hostScopes) < maxHosts {
		a.hostScopes[s[len("host:"):]] = s
	}
	return s
}

// ruleScope returns rule's scope (limits.Rule.Scope), made once per rule.
func (a *Analyzer) ruleScope(rule *limits.Rule) string {
	s, ok := a.ruleScopes[rule]
	if !ok {
		s = rule.Scope()
		a.ruleScopes[rule] = s
	}
	return s
}

// tally returns the tally of host (as kept: cut to maxKeptText) in m,
// making it when m holds fewer than maxHosts hosts (else the tally of
// otherHosts).
func tally(m map[string]*hostTally, host string) *hostTally {
	host = safetext.Cut(host, maxKeptText)
	if t := m[host]; t != nil {
		return t
	}
	if len(m) >= maxHosts {
		host = otherHosts
		if t := m[host]; t != nil {
			return t
		}
	}
	t := &hostTally{}
	m[strings.Clone(host)] = t
	return t
}

// notJudged lists c, a call to host, apart: not judged.
func (a *Analyzer) notJudged(c *Call, host string) {
	t := tally(a.apart, host)
	t.calls++
	if c.Status == 429 {
		if t.throttled++; len(t.evidence) < maxEvidence {
			t.evidence = append(t.evidence, Evidence{Index: a.offset + c.Index, Time: c.Time.UTC(), Status: c.Status})
		}
	}
}

// notJudgedFindings are the not-judged findings: a warning per host not
// judged that answered 429, since what the limits do not cover may be
// what failed.
func (a *Analyzer) notJudgedFindings() []Finding {
	var out []Finding
	for _, host := range slices.Sorted(maps.Keys(a.apart)) {
		t := a.apart[host]
		if t.throttled == 0 {
			continue
		}
		out = append(out, Finding{Rule: RuleNotJudged, Level: Warn, Time: t.evidence[0].Time, Host: shown(host), Calls: t.throttled,
			Evidence: t.evidence, Reason: fmt.Sprintf("%s answered 429 at %s, a host no rule of the limits (%s) covers: not judged; judge them by limits that cover it",
				plural(t.throttled, "call"), shown(host), shown(a.limits.Revision))})
	}
	return out
}

// hostCounts lists the tallies of m, most calls first.
func hostCounts(m map[string]*hostTally) []HostCount {
	out := make([]HostCount, 0, len(m))
	for h, t := range m {
		out = append(out, HostCount{Host: shown(h), Calls: t.calls, Server429s: t.throttled})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Calls != out[j].Calls {
			return out[i].Calls > out[j].Calls
		}
		return out[i].Host < out[j].Host
	})
	return out
}

// tokenless lists r, a call to host without a token, apart: counted, and
// kept for throttled-calls.
func (a *Analyzer) tokenless(host string, r rec) {
	t := tally(a.noToken, host)
	t.calls++
	if r.status == 429 {
		t.throttled++
	}
	t.recs = append(t.recs, r)
}

// tokenlessFindings are the findings on calls without a token: a no-token
// warning per host, and throttled-calls over each host's calls, listed as
// a group's are (judging.add); unlisted counts those past the list, by
// rule and level, for the report's counts.
func (a *Analyzer) tokenlessFindings() (out []Finding, unlisted map[ruleLevel]int) {
	unlisted = map[ruleLevel]int{}
	for _, host := range slices.Sorted(maps.Keys(a.noToken)) {
		t := a.noToken[host]
		out = append(out, Finding{Rule: RuleNoToken, Level: Warn, Host: shown(host), Calls: t.calls,
			Reason: fmt.Sprintf("%d calls to %s carry no Authorization: whose calls they are cannot be told, so they count against no user's limits (their 429s are judged per host)", t.calls, shown(host))})
		if t.throttled == 0 {
			continue
		}
		sort.SliceStable(t.recs, func(i, j int) bool { return t.recs[i].at < t.recs[j].at })
		j := judging{a: a, g: &group{user: -1, host: host}, recs: t.recs, gr: &Group{Host: shown(host)}}
		j.throttled()
		out = append(out, j.found...)
		for k, n := range j.unlisted {
			unlisted[k] += n
		}
	}
	return out, unlisted
}
