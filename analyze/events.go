package analyze

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"
)

// In-game events, as the trace analyzer reads them from the uploads a
// trace holds: Common Schema 2.1 uploads to *.data.microsoft.com (a JSON
// object a line, its "name" a title's event, "Microsoft.XboxLive.T" and 8
// characters, or the XCE bridge's), and Common Schema 1.0 uploads to
// data-vef.xboxlive.com (a '|'-separated line of at least 12 fields, its
// second "{Publisher}_{TitleId}.{EventName}", its third the time). Each
// event is one, at its own time; the upload calls themselves are not judged
// as service calls.
var (
	cs2Name = regexp.MustCompile(`^Microsoft\.XboxLive\.T[a-zA-Z0-9]{8}\.`)
	cs1Name = regexp.MustCompile(`^[a-zA-Z]{4}_[a-zA-Z0-9]{8}$`)
)

// MaxEvents bounds the in-game events an Analyzer keeps.
const MaxEvents = 4_000_000

// eventsHost reports whether host receives in-game event uploads.
func eventsHost(host string) bool {
	return host == "data-vef.xboxlive.com" || strings.HasSuffix(host, ".data.microsoft.com")
}

// addEvents keeps the in-game events an upload call carries, per user.
func (a *Analyzer) addEvents(c *Call, host string) {
	user := a.eventUser(c)
	for line := range bytes.SplitSeq(c.RequestBody, []byte("\n")) {
		if at, ok := eventTime(bytes.TrimSpace(line), host == "data-vef.xboxlive.com"); ok {
			a.keepEvent(user, at, c)
		}
	}
}

// addEvent keeps an in-game event a data file recorded as a row.
func (a *Analyzer) addEvent(c *Call) { a.keepEvent(a.eventUser(c), c.Time, c) }

// eventUser is the user of an upload or event: its token's, or -1.
func (a *Analyzer) eventUser(c *Call) int32 {
	if uhs, ok := userOf(c.Authorization); ok {
		return a.user(uhs)
	}
	return -1
}

// keepEvent keeps one event of call c at at, within MaxEvents.
func (a *Analyzer) keepEvent(user int32, at time.Time, c *Call) {
	if a.eventCount >= a.maxEvents {
		a.passOver(c, "in-game events", a.maxEvents)
		return
	}
	a.eventCount++
	a.events[user] = append(a.events[user], eventRec{at: at.UnixNano(), index: int32(a.offset + c.Index), status: status16(c.Status)})
}

// eventRec is what the events-burst rule needs of one in-game event: 16
// bytes, as an event line of an upload may take 46 bytes of a trace.
type eventRec struct {
	at     int64 // Unix nanoseconds
	index  int32 // of the call that carried it, in the whole analysis
	status int16 // that call's (status16)
}

// eventTime returns the time of one upload line when it is a title's
// in-game event.
func eventTime(line []byte, cs1 bool) (time.Time, bool) {
	if cs1 {
		fields := strings.Split(string(line), "|")
		if len(fields) < 12 {
			return time.Time{}, false
		}
		name, _, ok := strings.Cut(fields[1], ".")
		if !ok || !cs1Name.MatchString(name) {
			return time.Time{}, false
		}
		return parseLoggedTime(fields[2])
	}
	var ev struct{ Name, Time string }
	if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &ev) != nil {
		return time.Time{}, false
	}
	if !cs2Name.MatchString(ev.Name) && !strings.HasPrefix(ev.Name, "Microsoft.Xbox.XceBridge") {
		return time.Time{}, false
	}
	return parseLoggedTime(ev.Time)
}

// eventFindings is the events burst rule: Size or more of a user's in-game
// events within Window. It lists maxPerGroupRule of them per user and
// counts the rest, unlisted.
func (a *Analyzer) eventFindings() (out []Finding, unlisted int) {
	users := make([]int32, 0, len(a.events))
	for u := range a.events {
		users = append(users, u)
	}
	sort.Slice(users, func(i, j int) bool { return users[i] < users[j] })
	b := a.rules.Events
	for _, u := range users {
		evs := a.events[u]
		sort.SliceStable(evs, func(i, j int) bool { return evs[i].at < evs[j].at })
		who := "no user"
		if u >= 0 {
			who = shown(a.name(u))
		}
		for n, w := range windows(evs, time.Duration(b.Window), b.Size-1, true) {
			if n >= maxPerGroupRule {
				unlisted++
				continue
			}
			f := Finding{Rule: RuleEventsBurst, Level: Warn, Time: time.Unix(0, w[0].at).UTC(), User: who, Service: "inGameEvents", Calls: len(w),
				Reason: fmt.Sprintf("%d in-game events within %v: send fewer, or aggregate them", len(w), time.Duration(gap(w[0].at, w[len(w)-1].at)).Round(time.Millisecond)),
				APIs:   []string{"XblEventsWriteInGameEvent (events_service::write_in_game_event)"}}
			for _, r := range w[:min(len(w), maxEvidence)] {
				f.Evidence = append(f.Evidence, Evidence{Index: int(r.index), Time: time.Unix(0, r.at).UTC(), Status: int(r.status)})
			}
			out = append(out, f)
		}
	}
	return out, unlisted
}
