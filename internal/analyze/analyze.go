// Package analyze finds FGRL problems in recorded traffic, the way the public
// Xbox Live Trace Analyzer does: calls grouped per user and per rule, a
// sliding scan for burst and sustain violations, the 429s received and
// whether they were retried too soon, and a certification verdict.
package analyze

import (
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/xblgo/fgrl/internal/har"
	"github.com/xblgo/fgrl/internal/xblauth"
	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/ratelimit"
	"github.com/xblgo/fgrl/throttle"
)

// Verdicts, as the trace analyzer colours them.
const (
	Green  = "green"  // no violation
	Yellow = "yellow" // a burst or sustain violation: a warning, the title passes
	Red    = "red"    // a sustain window at the certification figure: fails
)

// Group is the analysis of one user's calls under one rule.
type Group struct {
	User    string `json:"user"` // the userhash; "" for calls without a token
	Scope   string `json:"scope"`
	Calls   int    `json:"calls"`
	Burst   int    `json:"burstLimit"`
	Sustain int    `json:"sustainLimit"`
	// Certification is the sustain-window count at which the title fails.
	Certification int `json:"certificationLimit"`
	// PeakBurst and PeakSustain are the most calls in any sliding window.
	PeakBurst   int `json:"peakBurst"`
	PeakSustain int `json:"peakSustain"`
	// BurstViolations and SustainViolations count the calls made while the
	// sliding window already held the limit.
	BurstViolations   int `json:"burstViolations"`
	SustainViolations int `json:"sustainViolations"`
	// Server429s counts 429 answers; RetriedTooSoon the calls sent before a
	// 429's Retry-After had passed; Longest429Run the longest run of
	// consecutive 429s (a title ignoring them).
	Server429s     int    `json:"server429s"`
	RetriedTooSoon int    `json:"retriedTooSoon"`
	Longest429Run  int    `json:"longest429Run"`
	Verdict        string `json:"verdict"`
}

// Report is the analysis of a trace.
type Report struct {
	Groups  []Group `json:"groups"`
	Skipped int     `json:"skipped"` // entries ignored (real-time activity, unparsable URLs)
	Verdict string  `json:"verdict"` // the worst group verdict
}

type call struct {
	at         time.Time
	status     int
	retryAfter string
}

// Analyze analyzes entries under limits. Hosts with no rule get the limits'
// Fallback (10 / 30 in the built-in tables), as the trace analyzer assumes.
func Analyze(entries []har.Entry, lim *limits.Limits) Report {
	type gkey struct{ user, scope string }
	groups := map[gkey][]call{}
	rules := map[gkey]*limits.Rule{}
	var rep Report
	for _, e := range entries {
		u, err := url.Parse(e.URL)
		if err != nil || u.Host == "" || u.Scheme == "wss" || u.Scheme == "ws" || strings.HasPrefix(u.Hostname(), "rta.") {
			rep.Skipped++
			continue
		}
		rule, scope := ruleFor(lim, e.Method, u)
		if rule == nil {
			rep.Skipped++
			continue
		}
		uhs, _, _ := xblauth.Parse(strings.Replace(e.Authorization, "REDACTED", "x", 1))
		k := gkey{uhs, scope}
		groups[k] = append(groups[k], call{e.Started, e.Status, e.RetryAfter})
		rules[k] = rule
	}
	for k, calls := range groups {
		rep.Groups = append(rep.Groups, analyzeGroup(k.user, k.scope, rules[k], calls))
	}
	sort.Slice(rep.Groups, func(i, j int) bool {
		a, b := rep.Groups[i], rep.Groups[j]
		if a.Scope != b.Scope {
			return a.Scope < b.Scope
		}
		return a.User < b.User
	})
	rep.Verdict = Green
	for _, g := range rep.Groups {
		rep.Verdict = worse(rep.Verdict, g.Verdict)
	}
	return rep
}

func ruleFor(lim *limits.Limits, method string, u *url.URL) (*limits.Rule, string) {
	if r, ok := lim.Match(method, u.Host, u.Path); ok {
		return r, r.Scope()
	}
	if lim.Fallback == nil {
		return nil, ""
	}
	return lim.Fallback, "host:" + strings.ToLower(u.Hostname())
}

func analyzeGroup(user, scope string, r *limits.Rule, calls []call) Group {
	sort.SliceStable(calls, func(i, j int) bool { return calls[i].at.Before(calls[j].at) })
	g := Group{User: user, Scope: scope, Calls: len(calls), Burst: r.Burst, Sustain: r.Sustain,
		Certification: r.CertificationLimit()}
	g.PeakBurst, g.BurstViolations = scan(calls, throttle.BurstPeriod, r.Burst)
	g.PeakSustain, g.SustainViolations = scan(calls, throttle.SustainPeriod, r.Sustain)
	g.Server429s, g.RetriedTooSoon, g.Longest429Run = throttled(calls)
	switch {
	case g.PeakSustain >= g.Certification:
		g.Verdict = Red
	case g.BurstViolations > 0 || g.SustainViolations > 0:
		g.Verdict = Yellow
	default:
		g.Verdict = Green
	}
	return g
}

// scan slides a window of period over calls (sorted) and returns the most
// calls in any window and how many calls found the window already holding
// limit calls. A limit of 0 means none.
func scan(calls []call, period time.Duration, limit int) (peak, violations int) {
	lo := 0
	for hi := range calls {
		for !calls[lo].at.After(calls[hi].at.Add(-period)) {
			lo++
		}
		n := hi - lo + 1
		peak = max(peak, n)
		if limit > 0 && n > limit {
			violations++
		}
	}
	return peak, violations
}

// throttled counts 429s, calls sent before a 429's Retry-After passed, and
// the longest run of consecutive 429s.
func throttled(calls []call) (n429, tooSoon, longest int) {
	var until time.Time
	run := 0
	for _, c := range calls {
		if c.at.Before(until) {
			tooSoon++
		}
		if c.status != 429 {
			run = 0
			continue
		}
		n429++
		run++
		longest = max(longest, run)
		if ra, ok := retryAfter(c.retryAfter, c.at); ok && c.at.Add(ra).After(until) {
			until = c.at.Add(ra) // the later deadline wins, as in the transport's cache
		}
	}
	return n429, tooSoon, longest
}

// retryAfter reads a 429's Retry-After. A trace may hold waits far longer
// than a transport would honour, so the cap is a day, not MaxRetryAfter.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	return ratelimit.ParseRetryAfter(v, now, 24*time.Hour)
}

func worse(a, b string) string {
	rank := map[string]int{Green: 0, Yellow: 1, Red: 2}
	if rank[b] > rank[a] {
		return b
	}
	return a
}
