// Package replay replays calls against the mock in virtual time, through a
// plain client, XSAPI-style retries or the fgrl transport: call patterns
// (xblcall simulate) and a trace's recorded calls (package whatif), and
// reports what the service saw per 15 s interval. It sits beside the CLI,
// above the transport and the mock it runs; package analyze never imports
// it.
package replay

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/internal/xblid"
)

// Event is one line of a pattern: at At, User calls Service Count times,
// spread evenly over Spread (all at once when zero), as interactive calls
// or, with Background, as a background job's.
type Event struct {
	At         time.Duration
	Service    string // a scope of the limits data, such as "profile"
	User       string // an xuid
	Count      int
	Spread     time.Duration
	Background bool // priority "background" (transport.Policy.Priority); else "interactive"
	// Req, when set, is the request to make (a replayed trace's call)
	// instead of the service's usual one; Service then only names it.
	Req *Request
}

// Request is a call a trace recorded: its method and URL. Its body is not
// replayed: the service counts calls, not bodies (Options.AnswerAll).
type Request struct {
	Method, URL string
}

// Pattern is a call pattern, in time order.
type Pattern []Event

// Bounds on patterns, so a hostile file cannot make a run unbounded.
const (
	MaxPatternSize = 4 << 20
	MaxCalls       = 2_000_000
	MaxSpan        = 7 * 24 * time.Hour
)

// jsonEvent is the JSON form: times in seconds.
type jsonEvent struct {
	Time     float64 `json:"time"`
	Service  string  `json:"service"`
	User     string  `json:"user"`
	Count    int     `json:"count"`
	Spread   float64 `json:"spread"`
	Priority string  `json:"priority"`
}

// ParsePattern reads a pattern: a JSON array of {"time", "service", "user",
// "count", "spread", "priority"} objects (times in seconds), or CSV lines of
// time,service,user,count[,spread[,priority]] with an optional header line;
// a priority is "interactive" (the default) or "background". Errors name
// the line or element.
func ParsePattern(r io.Reader) (Pattern, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxPatternSize+1))
	if err != nil {
		return nil, fmt.Errorf("sim: reading pattern: %w", err)
	}
	if len(b) > MaxPatternSize {
		return nil, fmt.Errorf("sim: pattern larger than %d bytes", MaxPatternSize)
	}
	var p Pattern
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '[' {
		p, err = parseJSON(t)
	} else {
		p, err = parseCSV(b)
	}
	if err != nil {
		return nil, err
	}
	return p, p.check()
}

// parseJSON reads the array one element at a time, so an error names the
// element and the byte offset where it was found.
func parseJSON(b []byte) (Pattern, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return nil, fmt.Errorf("sim: pattern JSON: want an array of events at byte %d", dec.InputOffset())
	}
	var p Pattern
	for i := 0; dec.More(); i++ {
		var e jsonEvent
		start := dec.InputOffset() // where the element (or the comma before it) starts
		if err := dec.Decode(&e); err != nil {
			return nil, fmt.Errorf("sim: pattern JSON element %d (from byte %d): %w", i, start, err)
		}
		ev, err := event(e.Time, e.Service, e.User, e.Count, e.Spread, e.Priority)
		if err != nil {
			return nil, fmt.Errorf("sim: pattern JSON element %d (from byte %d): %w", i, start, err)
		}
		p = append(p, ev)
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("sim: pattern JSON: unterminated array at byte %d", dec.InputOffset())
	}
	return p, nil
}

func parseCSV(b []byte) (Pattern, error) {
	cr := csv.NewReader(bytes.NewReader(b))
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	cr.Comment = '#'
	var p Pattern
	for line := 1; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return p, nil
		}
		if err != nil {
			return nil, fmt.Errorf("sim: pattern CSV: %w", err)
		}
		if line == 1 && strings.EqualFold(strings.TrimSpace(rec[0]), "time") {
			continue // header
		}
		ev, err := csvEvent(rec)
		if err != nil {
			l, _ := cr.FieldPos(0)
			return nil, fmt.Errorf("sim: pattern line %d: %w", l, err)
		}
		p = append(p, ev)
	}
}

func csvEvent(rec []string) (Event, error) {
	if len(rec) < 4 || len(rec) > 6 {
		return Event{}, fmt.Errorf("want time,service,user,count[,spread[,priority]], found %d fields", len(rec))
	}
	at, err1 := strconv.ParseFloat(strings.TrimSpace(rec[0]), 64)
	count, err2 := strconv.Atoi(strings.TrimSpace(rec[3]))
	spread := 0.0
	var err3 error
	if len(rec) >= 5 && strings.TrimSpace(rec[4]) != "" {
		spread, err3 = strconv.ParseFloat(strings.TrimSpace(rec[4]), 64)
	}
	if err := errors.Join(err1, err2, err3); err != nil {
		return Event{}, fmt.Errorf("bad number: %w", err)
	}
	priority := ""
	if len(rec) == 6 {
		priority = strings.TrimSpace(rec[5])
	}
	return event(at, strings.TrimSpace(rec[1]), strings.TrimSpace(rec[2]), count, spread, priority)
}

func event(at float64, service, user string, count int, spread float64, priority string) (Event, error) {
	switch {
	case priority != "" && priority != "interactive" && priority != "background":
		return Event{}, fmt.Errorf("priority %s is not interactive or background", safetext.Quote(priority, 40))
	case math.IsNaN(at) || at < 0 || at > MaxSpan.Seconds():
		return Event{}, fmt.Errorf("time %v is outside 0..%v s", at, MaxSpan.Seconds())
	case math.IsNaN(spread) || spread < 0 || spread > MaxSpan.Seconds():
		return Event{}, fmt.Errorf("spread %v is outside 0..%v s", spread, MaxSpan.Seconds())
	case service == "":
		return Event{}, errors.New("service is empty")
	case xblid.CheckXUID(user) != nil:
		return Event{}, fmt.Errorf("user: %w", xblid.CheckXUID(user))
	case count < 1 || count > MaxCalls:
		return Event{}, fmt.Errorf("count %d is outside 1..%d", count, MaxCalls)
	}
	return Event{At: seconds(at), Service: service, User: user, Count: count, Spread: seconds(spread), Background: priority == "background"}, nil
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// check sorts p and bounds its total calls.
func (p Pattern) check() error {
	if len(p) == 0 {
		return errors.New("sim: pattern is empty")
	}
	sort.SliceStable(p, func(i, j int) bool { return p[i].At < p[j].At })
	total := 0
	for _, e := range p {
		if total += e.Count; total > MaxCalls {
			return fmt.Errorf("sim: pattern makes more than %d calls", MaxCalls)
		}
	}
	return nil
}

// Calls returns the number of calls p makes.
func (p Pattern) Calls() int {
	n := 0
	for _, e := range p {
		n += e.Count
	}
	return n
}

// End returns when p's last call is made.
func (p Pattern) End() time.Duration {
	var end time.Duration
	for _, e := range p {
		end = max(end, e.At+e.Spread)
	}
	return end
}
