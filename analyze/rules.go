package analyze

import (
	"fmt"
	"io"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/xblgo/fgrl/datafile"
	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/throttle"
)

// Rules are the analysis's parameters, data like the limits: which hosts
// are judged and what each detection rule looks for. DefaultRules holds the
// Xbox Live Trace Analyzer's values (microsoft/xbox-live-trace-analyzer,
// Source/XboxLiveTraceAnalyzer.Rules.json and Source/RulesEngine/Constants.cs).
type Rules struct {
	// Services are the host patterns judged ("*.xboxlive.com"; * matches
	// one or more labels). Calls to other hosts are listed apart, never
	// judged. A host the limits data names is always judged.
	Services []string `json:"services"`
	// NearLimit is the share of a burst or sustain limit above which a
	// window is reported as nearing it (the analyzer's 0.9).
	NearLimit float64 `json:"nearLimit"`
	// Burst: Size or more calls to one service within Window.
	Burst BurstRule `json:"burst"`
	// Repeat: the same method, URL and body again within Window.
	Repeat RepeatRule `json:"repeat"`
	// Polling: at least MinCalls identical calls at the same interval,
	// each gap within Tolerance (a fraction) of the first, gaps at most
	// MaxGap.
	Polling PollingRule `json:"polling"`
	// Batches are the batch calls whose size and frequency are checked.
	Batches []BatchRule `json:"batches"`
	// SampleTitleIDs are the sample title IDs (hexadecimal) a title must
	// not ship with: PlayFab calls (a User-Agent naming PlayFab) to
	// <id>.playfabapi.com for one of them are a sample-title-id finding,
	// the certification warning XR-003 (the trace analyzer's TitleId rule).
	SampleTitleIDs []string `json:"sampleTitleIds"`
	// UserAgent, when set, is a title's own User-Agent: its calls are
	// judged whatever their host, by the limits' rule or else their
	// fallback (the trace analyzer's custom user agent, for a title's own
	// services).
	UserAgent string `json:"userAgent"`
	// Events: Size or more in-game events within Window are an
	// events-burst finding (the trace analyzer's BurstDetection rule for
	// inGameEvents).
	Events BurstRule `json:"events"`
}

// BurstRule is the BurstDetection rule.
type BurstRule struct {
	Window throttle.Duration `json:"window"`
	Size   int               `json:"size"`
}

// RepeatRule is the RepeatedCalls rule.
type RepeatRule struct {
	Window throttle.Duration `json:"window"`
}

// PollingRule is the PollingDetection rule.
type PollingRule struct {
	Tolerance float64           `json:"tolerance"`
	MinCalls  int               `json:"minCalls"`
	MaxGap    throttle.Duration `json:"maxGap"`
}

// BatchRule names a batch call: its host, a path pattern (a regular
// expression matched against the whole path) and the request body's field
// listing the users. Calls listing fewer than MinUsers are small batches;
// calls within Window of the first of a run could have been one call.
type BatchRule struct {
	Host     string            `json:"host"`
	Path     string            `json:"path"`
	Field    string            `json:"field"`
	MinUsers int               `json:"minUsers"`
	Window   throttle.Duration `json:"window"`

	re *regexp.Regexp
}

// DefaultRules returns the trace analyzer's rules: every *.xboxlive.com
// host judged, warnings past 90 % of a limit, 3 calls within 2 s, repeats
// within 5 s, polling of 5 or more calls within 1 % of one interval (at
// most an hour), and its five batch APIs with at least 2 users and 2 s
// between batches.
func DefaultRules() *Rules {
	batch := func(host, path, field string) BatchRule {
		return BatchRule{Host: host, Path: path, Field: field, MinUsers: 2, Window: throttle.Duration(2 * time.Second)}
	}
	r := &Rules{
		Services:       []string{"*.xboxlive.com"},
		NearLimit:      0.9,
		Burst:          BurstRule{Window: throttle.Duration(2 * time.Second), Size: 3},
		Repeat:         RepeatRule{Window: throttle.Duration(5 * time.Second)},
		Polling:        PollingRule{Tolerance: 0.01, MinCalls: 5, MaxGap: throttle.Duration(time.Hour)},
		SampleTitleIDs: []string{"86E2", "9AD5D", "78E25", "99DA", "63C80"},
		Events:         BurstRule{Window: throttle.Duration(5 * time.Second), Size: 10},
		Batches: []BatchRule{
			batch("userstats.xboxlive.com", `/batch`, "requestedusers"),
			batch("profile.xboxlive.com", `/users/batch/profile/settings`, "userIds"),
			batch("userpresence.xboxlive.com", `/users/batch`, "users"),
			batch("titlestorage.xboxlive.com", `/(json|trustedplatform|untrustedplatform)/users/batch`, "xuids"),
			batch("sessiondirectory.xboxlive.com", `/serviceconfigs/[^/]+(/sessiontemplates/[^/]+)?/batch`, "xuids"),
		},
	}
	if err := r.check(); err != nil {
		panic(err)
	}
	return r
}

// Bounds of a rules file.
const (
	// MaxRulesSize bounds a rules file.
	MaxRulesSize = 1 << 20
	// MaxBatches bounds the batch rules: each is a regular expression
	// compiled once per analysis.
	MaxBatches = 100
)

// rulesFile is the kind of a rules file.
var rulesFile = datafile.Kind{Name: "rules", MaxBytes: MaxRulesSize, Lists: map[string]int{"/batches": MaxBatches}}

// ReadRules reads rules from a rules file, JSON or YAML (at most
// MaxRulesSize), and checks them as New does. Fields left out keep
// DefaultRules' values; "batches", when given, replaces the default list.
// What is wrong is a *datafile.Error naming the line and field.
func ReadRules(r io.Reader) (*Rules, error) {
	rules := DefaultRules()
	if err := rulesFile.Read(r, rules, rules.check); err != nil {
		return nil, err
	}
	return rules, nil
}

// LoadRules reads the named rules file as ReadRules reads one; its errors
// name the file.
func LoadRules(name string) (*Rules, error) {
	rules := DefaultRules()
	if err := rulesFile.Load(name, rules, rules.check); err != nil {
		return nil, err
	}
	return rules, nil
}

// rulesError is what is wrong with rules, at field.
func rulesError(field, reason string) error {
	return &datafile.Error{File: "rules", Field: field, Reason: reason}
}

// check reports the first thing wrong with r, as a *datafile.Error, and
// compiles the batches' paths.
func (r *Rules) check() error {
	if err := r.checkLimits(); err != nil {
		return err
	}
	if len(r.Batches) > MaxBatches {
		return rulesError("batches", fmt.Sprintf("more than %d batch rules", MaxBatches))
	}
	for i := range r.Batches {
		b := &r.Batches[i]
		f := fmt.Sprintf("batches[%d]", i)
		re, err := regexp.Compile(`^(?:` + b.Path + `)$`)
		switch {
		case err != nil:
			why := safetext.Reason(strings.TrimPrefix(err.Error(), "error parsing regexp: "), 80)
			return rulesError(f+".path", "not a regular expression: "+strings.TrimRight(why, ": "))
		case b.Host == "":
			return rulesError(f+".host", "missing")
		case b.Field == "":
			return rulesError(f+".field", "missing")
		case b.MinUsers < 1:
			return rulesError(f+".minUsers", "want at least 1")
		case b.Window < 0:
			return rulesError(f+".window", "want a duration not negative")
		}
		b.re = re
	}
	return nil
}

// checkLimits checks every rule but the batches.
func (r *Rules) checkLimits() error {
	for i, s := range r.Services {
		if _, err := path.Match(s, "x"); err != nil || s == "" || strings.ContainsAny(s, "/ ") {
			return rulesError(fmt.Sprintf("services[%d]", i), clip(s)+" is not a host pattern")
		}
	}
	for i, id := range r.SampleTitleIDs {
		if _, err := strconv.ParseUint(id, 16, 64); err != nil || len(id) > 16 {
			return rulesError(fmt.Sprintf("sampleTitleIds[%d]", i), clip(id)+" is not a hexadecimal title ID")
		}
	}
	p := r.Polling
	switch {
	case r.NearLimit <= 0 || r.NearLimit > 1:
		return rulesError("nearLimit", fmt.Sprintf("%v: want a fraction in (0, 1]", r.NearLimit))
	case r.Burst.Window <= 0:
		return rulesError("burst.window", "want a positive duration")
	case r.Burst.Size < 2:
		return rulesError("burst.size", "want at least 2")
	case r.Events.Window <= 0:
		return rulesError("events.window", "want a positive duration")
	case r.Events.Size < 2:
		return rulesError("events.size", "want at least 2")
	case len(r.UserAgent) > MaxUserAgent:
		return rulesError("userAgent", fmt.Sprintf("longer than %d bytes", MaxUserAgent))
	case r.Repeat.Window <= 0:
		return rulesError("repeat.window", "want a positive duration")
	case p.Tolerance < 0 || p.Tolerance >= 1:
		return rulesError("polling.tolerance", fmt.Sprintf("%v: want a fraction in [0, 1)", p.Tolerance))
	case p.MinCalls < 3:
		return rulesError("polling.minCalls", "want at least 3")
	case p.MaxGap <= 0:
		return rulesError("polling.maxGap", "want a positive duration")
	}
	return nil
}

// judged reports whether host is one of the services judged.
// Judged reports whether calls to host are judged when the limits data has
// no rule for it: whether a pattern of Services matches it.
func (r *Rules) Judged(host string) bool {
	for _, s := range r.Services {
		if hostMatch(s, host) {
			return true
		}
	}
	return false
}

// hostMatch matches a host against a pattern whose leading "*." stands for
// one or more labels.
func hostMatch(pattern, host string) bool {
	if rest, ok := strings.CutPrefix(pattern, "*."); ok {
		return strings.HasSuffix(host, "."+rest) && len(host) > len(rest)+1
	}
	ok, _ := path.Match(pattern, host)
	return ok
}

// batchOf returns the batch rule a call matches and its index, or nil.
func (r *Rules) batchOf(host, p string) (int, *BatchRule) {
	for i := range r.Batches {
		b := &r.Batches[i]
		if strings.EqualFold(b.Host, host) && b.re != nil && b.re.MatchString(p) {
			return i, b
		}
	}
	return -1, nil
}

// clip escapes and clips text from a trace or a rules file for an error.
func clip(s string) string { return safetext.Clip(safetext.HideOpaque(s), 60) }

// shownValue is a value read from a trace as a reason quotes it: quoted when it
// is what a number or a time is written with (at most 40 bytes of digits,
// signs, '.', ':', ',', 'e', 'E', 'T', 'Z' and spaces), and otherwise its
// length alone: a field may hold what does not belong there (an
// Authorization value in a status, a shifted column), and a token written
// with other bytes between its runs ('%2B', '*', '!') is one all the same
// (README: "Tokens are never printed").
func shownValue(v string) string {
	if len(v) <= 40 && strings.Trim(v, "0123456789+-.:,eETZ ") == "" {
		return strconv.Quote(v)
	}
	return "(" + strconv.Itoa(len(v)) + " bytes, not shown)"
}
