package mock

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/xblgo/fgrl/analyze"
	"github.com/xblgo/fgrl/internal/safetext"
)

// CheckOptions says what Check asserts of the calls the mock saw: those
// since Since, when it is set, else those since the record of calls was
// last emptied (Handler.Reset, ForgetCalls, the admin API's reset), so that
// a suite that empties it between cases checks each case's calls. Every
// check fails closed: when the record dropped calls made in the window it
// looks at, which could be the calls it is about (it keeps the latest
// 10,000; emptying it drops them all), it fails, saying so.
type CheckOptions struct {
	// No429 fails when any call was answered 429: the code under test was
	// throttled (XSAPI asserts on every 429 in a development sandbox).
	No429 bool `json:"no429,omitempty"`
	// Certify fails when the trace analyzer's rules fail what the mock saw
	// (analyze's red verdict), with the failing findings, could not judge it
	// whole (analyze's incomplete verdict), or the mock saw no call to judge.
	Certify bool `json:"certify,omitempty"`
	// Expect fails when a filter matches another number of calls (each in
	// its own window: its Since, else this Since).
	Expect []Expectation  `json:"expect,omitempty"`
	Since  time.Time      `json:"since,omitzero"`
	Rules  *analyze.Rules `json:"-"` // the analyzer's rules (nil: the trace analyzer's own)
}

// Expectation is how many calls a filter should match.
type Expectation struct {
	CallFilter
	Count int `json:"count"`
}

// CheckResult is Check's verdict: OK, or what failed, one line each.
type CheckResult struct {
	OK       bool     `json:"ok"`
	Failures []string `json:"failures"`
	// Report is the analyzer's, with Certify.
	Report *analyze.Report `json:"report,omitempty"`
}

// maxCheckLines bounds the failures a check lists of one kind.
const maxCheckLines = 20

// Check asserts what opts asks of the calls the mock saw.
func (h *Handler) Check(opts CheckOptions) (CheckResult, error) {
	res := CheckResult{Failures: []string{}}
	since := CallFilter{Since: opts.Since}
	now := h.cfg.now()
	// A window that starts after the mock's clock holds no call yet: a
	// check of it would pass having looked at nothing.
	future := func(what string, t time.Time) {
		if t.After(now) {
			res.Failures = append(res.Failures, fmt.Sprintf("%s %s is after the mock's clock (%s): the window holds no call to check",
				what, t.Format(time.RFC3339Nano), now.Format(time.RFC3339Nano)))
		}
	}
	future("since", opts.Since)
	if opts.No429 {
		f := since
		f.Status = http.StatusTooManyRequests
		throttled := h.Calls(f)
		if dropped := h.journal.droppedIn(f.Since); dropped != "" { // after: a call dropped meanwhile fails the check
			res.Failures = append(res.Failures, "429: incomplete: "+dropped+", any of which may have been a 429")
		}
		for i, c := range throttled {
			if i == maxCheckLines {
				res.Failures = append(res.Failures, fmt.Sprintf("429: and %d more", len(throttled)-i))
				break
			}
			res.Failures = append(res.Failures, fmt.Sprintf("429: %s %s at %s (scope %s, Retry-After %s)",
				c.Method, safetext.Clip(c.URL, 120), c.Time.Format(time.RFC3339Nano), c.Scope, c.RetryAfter))
		}
	}
	failed := 0 // expectations not met
	for _, x := range opts.Expect {
		f := x.CallFilter
		if f.Since.IsZero() {
			f.Since = opts.Since
		} else {
			future("an expectation's since", f.Since)
		}
		n, unsure := h.journal.count(f)
		var why string
		switch dropped := h.journal.droppedIn(f.Since); {
		case dropped != "":
			why = ": incomplete: " + dropped
		case unsure > 0:
			why = fmt.Sprintf(": incomplete: a call's URL was clipped in the record (to %d bytes) before the filter's path ended, and it cannot be told apart (%d in all)",
				maxCallURL, unsure)
		case n == x.Count:
			continue
		}
		if failed++; failed <= maxCheckLines {
			res.Failures = append(res.Failures, fmt.Sprintf("expected %d calls %s, saw %d%s", x.Count, describeFilter(x.CallFilter), n, why))
		}
	}
	if failed > maxCheckLines {
		res.Failures = append(res.Failures, fmt.Sprintf("and %d more expectations not met", failed-maxCheckLines))
	}
	if opts.Certify {
		rep, err := h.certify(since, opts.Rules)
		if err != nil {
			return CheckResult{}, err
		}
		res.Report = rep
		if rep.Calls == 0 { // nothing judged is no pass (analyze: "the traces hold no calls")
			res.Failures = append(res.Failures, "certification: no calls to certify")
		}
		if gap := rep.Inputs[0].Gap(); gap != nil {
			res.Failures = append(res.Failures, "certification: incomplete: "+gap.Reason)
		}
		n := 0
		for _, f := range rep.Findings {
			if f.Level != analyze.Fail {
				continue
			}
			if n++; n > maxCheckLines {
				res.Failures = append(res.Failures, fmt.Sprintf("certification: and %d more failing findings", rep.Fails-maxCheckLines))
				break
			}
			res.Failures = append(res.Failures, fmt.Sprintf("certification: %s %s: %s", f.Rule, f.Service, safetext.Cut(f.Reason, 200)))
		}
	}
	res.OK = len(res.Failures) == 0
	return res, nil
}

// certify runs the trace analyzer's rules over the calls f matches. When
// the record of calls dropped some of them (it keeps the latest 10,000;
// emptying it drops them all), the verdict is incomplete: the record is
// one input, stopped at its start.
func (h *Handler) certify(f CallFilter, rules *analyze.Rules) (*analyze.Report, error) {
	a, err := analyze.New(h.cfg.limits, rules)
	if err != nil {
		return nil, err
	}
	calls := h.Calls(f)
	dropped := h.journal.droppedIn(f.Since) // after: a call dropped meanwhile fails the check, not passes it
	for i, c := range calls {
		a.Add(&analyze.Call{Index: i, Time: c.Time, Duration: time.Duration(c.Duration), Method: c.Method, URL: c.URL, Status: c.Status,
			RetryAfter: c.RetryAfter, RequestBody: c.body, Authorization: c.authorization()})
	}
	in := analyze.Input{Name: "the mock's record of calls", Calls: len(calls)}
	if dropped != "" {
		in.Truncated = dropped
		in.Stop = &analyze.Problem{Index: 0, Offset: -1, Reason: in.Truncated}
	}
	a.AddInput(in)
	return a.Report(), nil
}

// droppedIn says, when the record of calls dropped calls made at or after
// since, that a check of that window cannot see them all; "" when it
// dropped none. A zero since is the window since the record was last
// emptied, which only the bound on the record drops calls of.
func (j *journal) droppedIn(since time.Time) string {
	j.mu.Lock()
	defer j.mu.Unlock()
	switch {
	case !since.IsZero() && !j.emptied.IsZero() && !j.latestEmptied.Before(since):
		return fmt.Sprintf("the record of calls was emptied at %s (Reset, ForgetCalls): calls made in the window checked were dropped", j.emptied.Format(time.RFC3339Nano))
	case j.dropped > 0 && (since.IsZero() || !j.latestDropped.Before(since)):
		return fmt.Sprintf("the record keeps the latest %d calls (%d MiB): calls made in the window checked were dropped (%d in all)", maxCalls, maxCallsBytes>>20, j.dropped)
	}
	return ""
}

// describeFilter writes a filter as a test's failure reads it.
func describeFilter(f CallFilter) string {
	var parts []string
	add := func(name, v string) {
		if v != "" {
			parts = append(parts, name+"="+safetext.Clip(v, 80))
		}
	}
	add("method", f.Method)
	add("host", f.Host)
	if f.PathPrefix != "" {
		add("path", f.PathPrefix+"*")
	}
	add("scope", f.Scope)
	add("xuid", f.XUID)
	add("script", f.Script)
	if f.Status != 0 {
		add("status", fmt.Sprint(f.Status))
	}
	if len(parts) == 0 {
		return "(any)"
	}
	return "(" + strings.Join(parts, " ") + ")"
}
