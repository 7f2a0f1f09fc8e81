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
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/xblgo/fgrl/datafile"
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

// Request is a call a trace recorded: its method, URL, User-Agent and
// request body. The service counts calls, not bodies (Options.AnswerAll);
// the User-Agent and body are sent so that what records the calls the
// service sees (Options.Base) reads them as the trace had them.
type Request struct {
	Method, URL, UserAgent, Body string
}

// Pattern is a call pattern, in time order.
type Pattern []Event

// Bounds on patterns, so a hostile file cannot make a run unbounded.
const (
	MaxPatternSize = 4 << 20
	// MaxEvents bounds a pattern's lines (CSV) or elements (JSON).
	MaxEvents = 100_000
	MaxCalls  = 2_000_000
	MaxSpan   = 7 * 24 * time.Hour
)

// patternFile is the kind of a pattern's file: JSON, or else CSV.
var patternFile = datafile.Kind{Name: "pattern", MaxBytes: MaxPatternSize, Lists: map[string]int{"": MaxEvents}, Text: readCSV}

// fileEvent is an event as a file writes it: times in seconds.
type fileEvent struct {
	Time     float64 `json:"time"`
	Service  string  `json:"service"`
	User     string  `json:"user"`
	Count    int     `json:"count"`
	Spread   float64 `json:"spread"`
	Priority string  `json:"priority"`
}

// ReadPattern reads a pattern of at most MaxPatternSize bytes: a JSON
// array of {"time", "service", "user", "count", "spread", "priority"}
// objects (times in seconds), or CSV lines of
// time,service,user,count[,spread[,priority]] with an optional header line;
// a priority is "interactive" (the default) or "background". What is
// wrong is a *datafile.Error naming the line and the field.
func ReadPattern(r io.Reader) (Pattern, error) {
	var events []fileEvent
	var p Pattern
	if err := patternFile.Read(r, &events, func() (err error) { p, err = patternOf(events); return err }); err != nil {
		return nil, err
	}
	return p, nil
}

// LoadPattern reads the named pattern file as ReadPattern reads one; its
// errors name the file.
func LoadPattern(name string) (Pattern, error) {
	var events []fileEvent
	var p Pattern
	if err := patternFile.Load(name, &events, func() (err error) { p, err = patternOf(events); return err }); err != nil {
		return nil, err
	}
	return p, nil
}

// patternError is what is wrong with a pattern, at field.
func patternError(line int, field, reason string) error {
	return &datafile.Error{File: "pattern", Line: line, Field: field, Reason: reason}
}

// patternOf checks events and returns them as a pattern, in time order.
func patternOf(events []fileEvent) (Pattern, error) {
	if len(events) == 0 {
		return nil, patternError(0, "", "empty: no event")
	}
	if len(events) > MaxEvents {
		return nil, patternError(0, "", fmt.Sprintf("more than %d events", MaxEvents))
	}
	p := make(Pattern, len(events))
	total := 0
	for i, e := range events {
		ev, field, reason := e.event()
		if reason != "" {
			return nil, patternError(0, fmt.Sprintf("[%d].%s", i, field), reason)
		}
		if total += ev.Count; total > MaxCalls {
			return nil, patternError(0, "", fmt.Sprintf("the pattern makes more than %d calls", MaxCalls))
		}
		p[i] = ev
	}
	sort.SliceStable(p, func(i, j int) bool { return p[i].At < p[j].At })
	return p, nil
}

// event returns e as an Event, or the field at fault and why.
func (e fileEvent) event() (ev Event, field, reason string) {
	switch {
	case e.Priority != "" && e.Priority != "interactive" && e.Priority != "background":
		return Event{}, "priority", safetext.Quote(e.Priority, 40) + " is not interactive or background"
	case math.IsNaN(e.Time) || e.Time < 0 || e.Time > MaxSpan.Seconds():
		return Event{}, "time", fmt.Sprintf("%v is outside 0..%v s", e.Time, MaxSpan.Seconds())
	case math.IsNaN(e.Spread) || e.Spread < 0 || e.Spread > MaxSpan.Seconds():
		return Event{}, "spread", fmt.Sprintf("%v is outside 0..%v s", e.Spread, MaxSpan.Seconds())
	case e.Service == "":
		return Event{}, "service", "empty"
	case xblid.CheckXUID(e.User) != nil:
		return Event{}, "user", xblid.CheckXUID(e.User).Error()
	case e.Count < 1 || e.Count > MaxCalls:
		return Event{}, "count", fmt.Sprintf("%d is outside 1..%d", e.Count, MaxCalls)
	}
	return Event{At: seconds(e.Time), Service: e.Service, User: e.User, Count: e.Count, Spread: seconds(e.Spread), Background: e.Priority == "background"}, "", ""
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// readCSV reads a pattern's CSV form into v, a *[]fileEvent, each line
// checked as it is read so that an error names its line.
func readCSV(data []byte, v any) error {
	events := v.(*[]fileEvent)
	*events = make([]fileEvent, 0, min(bytes.Count(data, []byte{'\n'})+1, MaxEvents))
	data = bareCRs(bytes.TrimPrefix(data, []byte("\ufeff"))) // a byte order mark, as spreadsheets save "CSV UTF-8"
	cr := csv.NewReader(bytes.NewReader(data))
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	cr.Comment = '#'
	cr.ReuseRecord = true // its fields are strings of their own
	for first := true; ; first = false {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return patternError(pe.Line, "", "not CSV: "+pe.Err.Error())
		}
		if err != nil {
			return patternError(0, "", "not CSV: "+err.Error())
		}
		line, _ := cr.FieldPos(0)
		if first && strings.EqualFold(strings.TrimSpace(rec[0]), "time") {
			continue // header
		}
		if len(*events) == MaxEvents {
			return patternError(line, "", fmt.Sprintf("more than %d events", MaxEvents))
		}
		e, field, reason := csvEvent(rec)
		if reason == "" {
			_, field, reason = e.event()
		}
		if reason != "" {
			if i := slices.Index(csvFields[:], field); i >= 0 && i < len(rec) {
				line, _ = cr.FieldPos(i) // the field's own line: a quoted field before it may hold line breaks
			}
			return patternError(line, field, reason)
		}
		*events = append(*events, e)
	}
}

// csvFields are a CSV pattern's fields, in their order.
var csvFields = [...]string{"time", "service", "user", "count", "spread", "priority"}

// bareCRs returns data with each bare CR (one no LF follows) made a LF:
// a bare CR ends a line as datafile.Error counts lines, where encoding/csv
// ends them at LFs only. data itself when it holds no CR.
func bareCRs(data []byte) []byte {
	if bytes.IndexByte(data, '\r') < 0 {
		return data
	}
	out := bytes.Clone(data)
	for i, c := range out {
		if c == '\r' && (i+1 == len(out) || out[i+1] != '\n') {
			out[i] = '\n'
		}
	}
	return out
}

// csvEvent reads a CSV line as an event, or says which field is wrong.
func csvEvent(rec []string) (e fileEvent, field, reason string) {
	if len(rec) < 4 || len(rec) > 6 {
		return e, "", fmt.Sprintf("want time,service,user,count[,spread[,priority]], found %d fields", len(rec))
	}
	for i := range rec {
		rec[i] = strings.TrimSpace(rec[i])
	}
	e = fileEvent{Service: rec[1], User: rec[2]}
	var err error
	if e.Time, err = strconv.ParseFloat(rec[0], 64); err != nil {
		return e, "time", "not a number"
	}
	if e.Count, err = strconv.Atoi(rec[3]); err != nil {
		return e, "count", "not a whole number"
	}
	if len(rec) >= 5 && rec[4] != "" {
		if e.Spread, err = strconv.ParseFloat(rec[4], 64); err != nil {
			return e, "spread", "not a number"
		}
	}
	if len(rec) == 6 {
		e.Priority = rec[5]
	}
	return e, "", ""
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
