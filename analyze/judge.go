package analyze

import (
	minheap "container/heap"
	"fmt"
	"math"
	"time"

	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/throttle"
)

// judge runs every rule over one group's calls, recs (Analyzer.callsOf):
// the group, the findings it lists, and the count of those past
// maxPerGroupRule, per rule and level.
func (a *Analyzer) judge(g *group, recs []rec) (Group, []Finding, map[ruleLevel]int) {
	info := a.userInfo[g.user]
	gr := Group{User: shown(a.name(g.user)), Userhash: shown(info.hash), XUID: shown(info.xuid()), Gamertag: shown(info.gamertag()),
		Service: shown(g.scope), Host: shown(g.host), Burst: g.rule.Burst, Sustain: g.rule.ClientLimit().Sustain,
		Certification: g.rule.CertificationLimit(), Calls: len(recs)}
	stats(recs, &gr)
	j := judging{a: a, g: g, recs: recs, gr: &gr}
	j.frequency()
	j.throttled()
	j.bursts()
	j.repeats()
	j.polling()
	j.batches()
	for _, f := range j.found {
		if f.Level == Fail {
			gr.Fails++
		} else {
			gr.Warnings++
		}
	}
	for k, n := range j.unlisted {
		if k.level == Fail {
			gr.Fails += n
		} else {
			gr.Warnings += n
		}
	}
	gr.Verdict = verdict(gr.Fails, gr.Warnings)
	return gr, j.found, j.unlisted
}

// verdict colours a count of failures and warnings.
func verdict(fails, warnings int) string {
	switch {
	case fails > 0:
		return Red
	case warnings > 0:
		return Yellow
	}
	return Green
}

// stats fills the group's counts, peaks and gaps.
func stats(recs []rec, gr *Group) {
	gr.First, gr.Last = time.Unix(0, recs[0].at).UTC(), time.Unix(0, recs[len(recs)-1].at).UTC()
	seen := map[uint64]bool{}
	minGap := int64(math.MaxInt64)
	for i, r := range recs {
		if r.status == 429 {
			gr.Server429s++
		}
		if seen[r.key] {
			gr.Duplicates++
		}
		seen[r.key] = true
		if i > 0 {
			minGap = min(minGap, gap(recs[i-1].at, r.at))
		}
	}
	if len(recs) > 1 {
		gr.MinGap = throttle.Duration(minGap)
		gr.AvgGap = throttle.Duration(gap(recs[0].at, recs[len(recs)-1].at) / int64(len(recs)-1))
	}
	gr.PeakBurst = peak(recs, throttle.BurstPeriod)
	gr.PeakSustain = peak(recs, throttle.SustainPeriod)
}

// peak returns the most calls within any span of period, as the service's
// windows count them: from a start, up to but not including start+period.
func peak(recs []rec, period time.Duration) int {
	best, lo := 0, 0
	for hi := range recs {
		for gap(recs[lo].at, recs[hi].at) >= int64(period) {
			lo++
		}
		best = max(best, hi-lo+1)
	}
	return best
}

// gap returns later-earlier in nanoseconds (later >= earlier), saturating
// where the two are more than 292 years apart.
func gap(earlier, later int64) int64 {
	if d := later - earlier; d >= 0 {
		return d
	}
	return math.MaxInt64
}

// maxTimeline bounds the buckets of a group's timeline.
const maxTimeline = 400

// timeline counts calls and 429s per bucket from start; the bucket is 15 s,
// doubled until the span fits maxTimeline buckets. Spans are unsigned, so
// traces centuries long (a clock gone wrong) still fit.
func timeline(recs []rec, start, end time.Time) (time.Duration, []int, []int) {
	from := start.UnixNano()
	span := uint64(end.UnixNano()) - uint64(from)
	bucket := uint64(throttle.BurstPeriod)
	for span/bucket >= maxTimeline {
		bucket *= 2
	}
	n := int(span/bucket) + 1
	calls, throttled := make([]int, n), make([]int, n)
	for _, r := range recs {
		i := min(int((uint64(r.at)-uint64(from))/bucket), n-1)
		calls[i]++
		if r.status == 429 {
			throttled[i]++
		}
	}
	return time.Duration(bucket), calls, throttled
}

// judging is one group's evaluation.
type judging struct {
	a        *Analyzer
	g        *group
	recs     []rec // the group's calls, sorted by time
	gr       *Group
	found    []Finding
	listed   map[ruleLevel]int
	unlisted map[ruleLevel]int // findings past maxPerGroupRule
}

// ruleLevel is a rule and a level, as maxPerGroupRule bounds findings.
type ruleLevel struct{ rule, level string }

// add records a finding over recs unless the group lists maxPerGroupRule
// of the rule at that level already (it is then only counted): warnings
// never crowd a failure out of the list.
func (j *judging) add(rule, level string, recs []rec, url bool, format string, args ...any) {
	if j.listed == nil {
		j.listed, j.unlisted = map[ruleLevel]int{}, map[ruleLevel]int{}
	}
	k := ruleLevel{rule, level}
	if j.listed[k] == maxPerGroupRule {
		j.unlisted[k]++
		return
	}
	j.listed[k]++
	f := Finding{Rule: rule, Level: level, Time: time.Unix(0, recs[0].at).UTC(), User: j.gr.User,
		Service: j.gr.Service, Host: j.gr.Host, Calls: len(recs), Reason: fmt.Sprintf(format, args...)}
	for _, r := range recs[:min(len(recs), maxEvidence)] {
		f.Evidence = append(f.Evidence, Evidence{Index: int(r.index), Time: time.Unix(0, r.at).UTC(), Status: int(r.status)})
	}
	if url {
		f.URL = safetext.Clip(j.a.urls[recs[0].key], maxShownURL)
	}
	j.found = append(j.found, f)
}

// timed is a record with a time: a call's rec, or an in-game event's.
type timed interface{ time() int64 }

func (r rec) time() int64      { return r.at }
func (e eventRec) time() int64 { return e.at }

// windows returns the spans of recs holding more than threshold calls,
// none overlapping another: each span starts at a call and takes every
// call within period of it (its end in when inclusive, as "within 2 s"
// reads; out for the service's 15 s and 300 s windows). Of spans over
// threshold whose starts fall within the span kept so far, the one
// holding the most calls is kept, so the most calls of any span are
// always found, wherever it starts; the next span starts after it (the
// trace analyzer's GetExcessCallsForTimeWindow keeps the first span over
// threshold, and so may split the densest between two). Both ends only
// move forward: the time is linear in the calls.
func windows[R timed](recs []R, period time.Duration, threshold int, inclusive bool) [][]R {
	var out [][]R
	in := func(d int64) bool { return d < int64(period) || inclusive && d == int64(period) }
	end := func(lo, hi int) int { // the end of the span from lo; hi is no later than it
		for hi < len(recs) && in(gap(recs[lo].time(), recs[hi].time())) {
			hi++
		}
		return hi
	}
	best, bestEnd, hi := -1, 0, 0
	for lo := 0; lo < len(recs); lo++ {
		if best >= 0 && lo == bestEnd {
			out = append(out, recs[best:bestEnd])
			best = -1
		}
		hi = end(lo, max(hi, lo))
		if hi-lo > threshold && (best < 0 || hi-lo > bestEnd-best) {
			best, bestEnd = lo, hi
		}
	}
	if best >= 0 {
		out = append(out, recs[best:bestEnd])
	}
	return out
}

// frequency is CallFrequency: windows nearing or over the burst and sustain
// limits (warnings), and sustain windows at the certification figure
// (failures).
func (j *judging) frequency() {
	r := j.g.rule
	near := j.a.rules.NearLimit
	check := func(name string, period time.Duration, limit int) {
		if limit <= 0 {
			return
		}
		secs := int(period / time.Second)
		for _, w := range windows(j.recs, period, int(float64(limit)*near), false) {
			n := len(w)
			switch {
			case name == "sustain" && j.gr.Certification > 0 && n >= j.gr.Certification: // 0: a rule with no figure (no title sustain)
				j.add(RuleCallFrequency, Fail, w, false,
					"%d calls in %d s reach the certification figure of %d (sustain limit %d)", n, secs, j.gr.Certification, limit)
			case n >= limit:
				j.add(RuleCallFrequency, Warn, w, false,
					"%d calls in %d s, at or over the %s limit of %d: the service answers 429", n, secs, name, limit)
			default:
				j.add(RuleCallFrequency, Warn, w, false,
					"%d calls in %d s, past %.0f%% of the %s limit of %d", n, secs, 100*near, name, limit)
			}
		}
	}
	l := r.ClientLimit() // a Store rule's publisher sustain, when lower, is the one a title's calls reach first
	check("burst", throttle.BurstPeriod, l.Burst)
	check("sustain", throttle.SustainPeriod, l.Sustain)
}

// throttled is ThrottledCalls: a single 429 is a warning; two or more in a
// row fail, and so does any call sent before a 429's Retry-After passed.
func (j *judging) throttled() {
	recs := j.recs
	for i := 0; i < len(recs); {
		if recs[i].status != 429 {
			i++
			continue
		}
		k := i
		for k < len(recs) && recs[k].status == 429 {
			k++
		}
		if k-i == 1 {
			j.add(RuleThrottledCalls, Warn, recs[i:k], false, "a 429 (Retry-After %s): back off until it passes", raText(recs[i]))
		} else {
			j.add(RuleThrottledCalls, Fail, recs[i:k], false, "%d 429s in a row: the title does not back off after a 429", k-i)
		}
		i = k
	}
	// A call is early when it was sent after a 429's answer arrived and
	// before its Retry-After passed: a call sent while the 429 was in
	// flight follows nothing. The 429s wait in pending until their
	// answers' arrival; until is the latest end of those arrived.
	var pending raPending
	var until int64 = math.MinInt64
	var soon []rec
	var from rec
	flush := func() {
		if len(soon) > 0 {
			ev := append([]rec{from}, soon...)
			j.add(RuleThrottledCalls, Fail, ev, false, "%s sent before the 429's Retry-After of %s passed",
				plural(len(soon), "call"), raText(from))
		}
		soon = nil
	}
	for _, r := range recs {
		for len(pending) > 0 && pending[0].arrival <= r.at {
			p := minheap.Pop(&pending).(raWindow)
			if p.end > until {
				if p.arrival >= until { // the window before ended: this one begins
					flush()
					from = p.r
				}
				until = p.end
			}
		}
		if r.at < until {
			soon = append(soon, r)
		}
		if r.status == 429 && r.ra >= 0 {
			// answer is rounded up: a millisecond less is no later than
			// the arrival, so no call after it is read as in flight.
			minheap.Push(&pending, raWindow{r: r, arrival: afterMs(r.at, max(int64(r.answer)-1, 0)), end: raEnd(r)})
		}
	}
	flush()
}

// raEnd returns when r's Retry-After passes, in Unix nanoseconds: r.ra
// after r.at (r.ra is never negative here).
func raEnd(r rec) int64 { return afterMs(r.at, int64(r.ra)) }

// afterMs returns at plus ms milliseconds (0 or more), saturating at the
// end of time (at may be before 1970, negative).
func afterMs(at, ms int64) int64 {
	d := ms * int64(time.Millisecond)
	if at > math.MaxInt64-d {
		return math.MaxInt64
	}
	return at + d
}

// raWindow is a 429's Retry-After: from its answer's arrival to its end.
type raWindow struct {
	r            rec
	arrival, end int64
}

// raPending is a min-heap of raWindows by arrival (minheap).
type raPending []raWindow

func (h raPending) Len() int           { return len(h) }
func (h raPending) Less(i, j int) bool { return h[i].arrival < h[j].arrival }
func (h raPending) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *raPending) Push(x any)        { *h = append(*h, x.(raWindow)) }
func (h *raPending) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// raText writes a 429's Retry-After, as a wait from its answer.
func raText(r rec) string {
	if r.ra < 0 {
		return "not given"
	}
	return (time.Duration(max(int64(r.ra)-int64(r.answer), 0)) * time.Millisecond).String()
}

// bursts is BurstDetection: Size or more calls within Window.
func (j *judging) bursts() {
	b := j.a.rules.Burst
	for _, w := range windows(j.recs, time.Duration(b.Window), b.Size-1, true) {
		j.add(RuleBurst, Warn, w, false, "%d calls within %v", len(w), time.Duration(gap(w[0].at, w[len(w)-1].at)).Round(time.Millisecond))
	}
}

// repeats is RepeatedCalls: the same call again within Window of its first.
func (j *judging) repeats() {
	window := int64(j.a.rules.Repeat.Window)
	open := map[uint64][]rec{}
	report := func(set []rec) {
		if len(set) > 1 {
			j.add(RuleRepeatedCalls, Warn, set, true, "the same call %d times within %v", len(set), time.Duration(window))
		}
	}
	for _, r := range j.recs {
		if r.social {
			continue // Social Manager's: exempt (the trace analyzer's PR #47)
		}
		set := open[r.key]
		if len(set) > 0 && gap(set[0].at, r.at) < window {
			open[r.key] = append(set, r)
			continue
		}
		report(set)
		open[r.key] = []rec{r}
	}
	for _, r := range j.recs { // report in time order, each set once
		if set := open[r.key]; len(set) > 0 && set[0].index == r.index {
			report(set)
			delete(open, r.key)
		}
	}
}

// polling is PollingDetection: MinCalls or more identical calls whose gaps
// stay within Tolerance of the first gap (and at most MaxGap).
func (j *judging) polling() {
	p := j.a.rules.Polling
	byKey := map[uint64][]rec{}
	var keys []uint64
	for _, r := range j.recs {
		if r.social {
			continue // Social Manager's: exempt
		}
		if byKey[r.key] == nil {
			keys = append(keys, r.key)
		}
		byKey[r.key] = append(byKey[r.key], r)
	}
	for _, k := range keys {
		calls := byKey[k]
		for lo := 0; lo+1 < len(calls); {
			every := gap(calls[lo].at, calls[lo+1].at)
			hi := lo + 1
			for hi+1 < len(calls) && every > 0 && every <= int64(p.MaxGap) &&
				math.Abs(float64(gap(calls[hi].at, calls[hi+1].at))-float64(every)) <= p.Tolerance*float64(every) {
				hi++
			}
			if n := hi - lo + 1; n >= p.MinCalls && every > 0 && every <= int64(p.MaxGap) {
				j.add(RulePolling, Warn, calls[lo:hi+1], true, "%d identical calls every %v: polling",
					n, time.Duration(every).Round(time.Millisecond))
				lo = hi
				continue
			}
			lo++
		}
	}
}

// batches is SmallBatchDetection and BatchFrequency.
func (j *judging) batches() {
	for bi := range j.a.rules.Batches {
		b := &j.a.rules.Batches[bi]
		var calls, small []rec
		for _, r := range j.recs {
			if int(r.batch) != bi+1 {
				continue
			}
			calls = append(calls, r)
			if r.users >= 0 && int(r.users) < b.MinUsers && !r.social { // Social Manager's: exempt
				small = append(small, r)
			}
		}
		if len(small) > 0 {
			j.add(RuleSmallBatch, Warn, small, true, "%s listed fewer than %d users: batch more users per call",
				plural(len(small), "batch call"), b.MinUsers)
		}
		for lo := 0; lo < len(calls); {
			hi, users := lo+1, max(int(calls[lo].users), 0)
			for hi < len(calls) && gap(calls[lo].at, calls[hi].at) <= int64(b.Window) {
				users += max(int(calls[hi].users), 0)
				hi++
			}
			if hi-lo >= 2 {
				j.add(RuleBatchFrequency, Warn, calls[lo:hi], true, "%d batch calls within %v listing %d users in all: one call could do",
					hi-lo, time.Duration(b.Window), users)
			}
			lo = hi
		}
	}
}

// plural writes "1 call" or "3 calls".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
