package mock

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The presence service, contract 3: GET /users/{me|xuid(N)}?level=all,
// POST /users/batch, and POST / DELETE
// /users/{me|xuid(N)}/devices/current/titles/current to set or clear the
// caller's presence (visible to later gets). Shapes: XSAPI
// Tests/UnitTests/Tests/Services/PresenceTests.cpp (records, the set body)
// and OpenXbox/xbox-webapi-python tests/data/responses/presence*.json
// (offline records with lastSeen).
//
// A set answers X-Heartbeat-After: 300, as the service does (a recorded
// Minecraft trace; XSAPI presence_service.cpp and published clients such
// as df-mc/go-xsapi schedule their next write by it). A title that stops
// writing goes offline: an Online record not renewed within twice that
// (heartbeatExpiry) reads as Offline, last seen at its last write, and
// RTA subscribers hear it go offline then (presenceLapses). A user
// with no record is Offline, last seen in the most recent title of their
// title history (none for a user who has played nothing).
//
// A set names a rich presence string by id from the title's configuration,
// with token ids for its placeholders; the service renders the string. The
// mock has no configured strings: it renders the id, followed by the params
// in parentheses when there are any ("playingMap(dust2)").

type presenceRecord struct {
	XUID     string           `json:"xuid"`
	State    string           `json:"state"`
	Devices  []presenceDevice `json:"devices,omitempty"`
	LastSeen *lastSeen        `json:"lastSeen,omitempty"`
	// Cloaked: the user appears offline (PUT .../state "Cloaked") until
	// they set "Active" again; never written to the wire. The cloak itself
	// is kept apart (state.cloaked), so it outlives the record; this is a
	// copy of it, made where a record is read (state.record,
	// forgetEvicted) or stored.
	Cloaked bool `json:"-"`
}

type lastSeen struct {
	DeviceType string `json:"deviceType"`
	TitleID    string `json:"titleId"`
	TitleName  string `json:"titleName"`
	Timestamp  string `json:"timestamp"`
}

type presenceDevice struct {
	Type   string          `json:"type"`
	Titles []presenceTitle `json:"titles"`
}

type presenceTitle struct {
	ID           string            `json:"id"`
	Name         string            `json:"name"`
	Placement    string            `json:"placement"`
	State        string            `json:"state"`
	LastModified string            `json:"lastModified"`
	Activity     *presenceActivity `json:"activity,omitempty"`
}

type presenceActivity struct {
	RichPresence string `json:"richPresence"`
}

// deviceType is the device the mock's users are present on.
const deviceType = "Scarlett"

// The service's bounds.
const (
	maxPresenceUsers  = 1100
	maxPresenceParams = 20
	maxPresenceID     = 256
)

// presenceService answers the presence service.
type presenceService struct{ *world }

func (s presenceService) routes() []route {
	return []route{
		{http.MethodGet, pat("/users/{user}"), s.serveGetPresence, "3"},
		{http.MethodPost, pat("/users/batch"), s.serveBatchPresence, "3"},
		{http.MethodPost, pat("/users/{user}/devices/current/titles/current"), s.serveSetPresence, "3"},
		{http.MethodDelete, pat("/users/{user}/devices/current/titles/current"), s.serveClearPresence, "3"},
		{http.MethodPut, pat("/users/{user}/state"), s.serveSetUserState, "3"},
	}
}

// heartbeatAfter is the X-Heartbeat-After a presence write answers, in
// seconds; heartbeatExpiry is how long an Online record lasts unrenewed.
const (
	heartbeatAfter  = 300
	heartbeatExpiry = 2 * heartbeatAfter * time.Second
)

func (w *world) presenceOf(xuid string) presenceRecord {
	w.state.mu.Lock()
	p, ok := w.state.record(xuid)
	w.state.mu.Unlock()
	return w.seen(xuid, p, ok)
}

// seen is xuid's presence as a get reads it, from their stored record p
// (ok: there is one).
func (w *world) seen(xuid string, p presenceRecord, ok bool) presenceRecord {
	if ok && p.Cloaked {
		return presenceRecord{XUID: xuid, State: "Offline"}
	}
	if ok && p.State == "Online" && len(p.Devices) > 0 && len(p.Devices[0].Titles) > 0 {
		t := p.Devices[0].Titles[0]
		if at, err := time.Parse(time.RFC3339, t.LastModified); err == nil && w.now().Sub(at) > heartbeatExpiry {
			return presenceRecord{XUID: xuid, State: "Offline", LastSeen: &lastSeen{DeviceType: deviceType,
				TitleID: t.ID, TitleName: t.Name, Timestamp: xblTime(t.LastModified)}}
		}
	}
	if ok {
		return p
	}
	rec := presenceRecord{XUID: xuid, State: "Offline"}
	var last titleProgress
	for _, t := range w.titlesPlayed(xuid) {
		if t.lastPlayed >= last.lastPlayed { // one layout: strings order as times
			last = t
		}
	}
	if last.title != "" {
		rec.LastSeen = &lastSeen{DeviceType: deviceType, TitleID: last.title, TitleName: titleName(last.title), Timestamp: last.lastPlayed}
	}
	return rec
}

func (s presenceService) serveGetPresence(c *call) {
	writeJSON(c.w, http.StatusOK, s.presenceOf(c.user(c.params[0])))
}

func (s presenceService) serveBatchPresence(c *call) {
	var req struct {
		Users            []string `json:"users"`
		Level            string   `json:"level"`
		OnlineOnly       bool     `json:"onlineOnly"`
		BroadcastingOnly bool     `json:"broadcastingOnly"`
	}
	if !c.decode(&req) {
		return
	}
	if len(req.Users) == 0 || len(req.Users) > maxPresenceUsers || slices.ContainsFunc(req.Users, notXUID) {
		writeError(c.w, http.StatusBadRequest, "BadRequest", "users must hold 1 to 1100 xuids")
		return
	}
	out := make([]presenceRecord, 0, len(req.Users))
	for _, x := range req.Users {
		if p := s.presenceOf(x); !req.OnlineOnly || p.State != "Offline" {
			out = append(out, p)
		}
	}
	writeJSON(c.w, http.StatusOK, out)
}

// presenceSet is the body of a set, as XSAPI writes it.
type presenceSet struct {
	State    string `json:"state"`
	Activity *struct {
		RichPresence *struct {
			ID     string   `json:"id"`
			Scid   string   `json:"scid"`
			Params []string `json:"params"`
		} `json:"richPresence"`
	} `json:"activity"`
}

// render returns the rich presence string, or a message saying why the set
// is refused: a set names the SCID of the caller's title, scid.
func (s *presenceSet) render(scid string) (rich string, bad string) {
	if s.State != "active" && s.State != "inactive" {
		return "", `state must be "active" or "inactive"`
	}
	if s.Activity == nil || s.Activity.RichPresence == nil {
		return "", ""
	}
	rp := s.Activity.RichPresence
	switch {
	case rp.ID == "" || len(rp.ID) > maxPresenceID:
		return "", "richPresence.id must name a configured string"
	case rp.Scid != scid:
		return "", "richPresence.scid is not the caller's title's"
	case len(rp.Params) > maxPresenceParams:
		return "", "richPresence.params holds too many tokens"
	}
	for _, p := range rp.Params {
		if len(p) > maxPresenceID {
			return "", "a richPresence.params token is longer than 256 bytes"
		}
	}
	if len(rp.Params) == 0 {
		return rp.ID, ""
	}
	return rp.ID + "(" + strings.Join(rp.Params, ",") + ")", ""
}

func (s presenceService) serveSetPresence(c *call) {
	xuid := c.user(c.params[0])
	if xuid != c.id.xuid {
		writeError(c.w, http.StatusForbidden, "Forbidden", "a user may set only their own presence")
		return
	}
	var req presenceSet
	if !c.decode(&req) {
		return
	}
	rich, bad := req.render(s.scidOf(c.id.title))
	if bad != "" {
		writeError(c.w, http.StatusBadRequest, "BadRequest", bad)
		return
	}
	state := "Active"
	if req.State == "inactive" {
		state = "Inactive"
	}
	title := presenceTitle{ID: c.id.title, Name: titleName(c.id.title), Placement: "Full",
		State: state, LastModified: s.now().UTC().Format(time.RFC3339)}
	if rich != "" {
		title.Activity = &presenceActivity{RichPresence: rich}
	}
	s.storePresence(presenceRecord{XUID: xuid, State: "Online",
		Devices: []presenceDevice{{Type: deviceType, Titles: []presenceTitle{title}}}})
	c.w.Header().Set("X-Heartbeat-After", strconv.Itoa(heartbeatAfter))
	c.w.WriteHeader(http.StatusOK)
}

// serveClearPresence takes the caller offline; later gets say where the
// caller was last seen. Another user's path is refused, as a set of it is.
func (s presenceService) serveClearPresence(c *call) {
	if c.user(c.params[0]) != c.id.xuid {
		writeError(c.w, http.StatusForbidden, "Forbidden", "a user may clear only their own presence")
		return
	}
	seen := &lastSeen{DeviceType: deviceType, TitleID: c.id.title, TitleName: titleName(c.id.title),
		Timestamp: s.now().UTC().Format("2006-01-02T15:04:05.0000000Z")}
	s.storePresence(presenceRecord{XUID: c.id.xuid, State: "Offline", LastSeen: seen})
	c.w.WriteHeader(http.StatusOK)
}

// serveSetUserState answers PUT /users/{user}/state, {"state": "Active"}
// or "Cloaked": the user's own presence state (OpenXbox/xbox-webapi-python
// PresenceProvider.set_presence_own and its test: 200, no body). A cloaked
// user reads as Offline, to others and to themselves, with no devices and
// no last seen, until they set Active; a title's later write is kept
// behind the cloak.
func (s presenceService) serveSetUserState(c *call) {
	if c.user(c.params[0]) != c.id.xuid {
		writeError(c.w, http.StatusForbidden, "Forbidden", "a user may set only their own presence")
		return
	}
	var req struct {
		State string `json:"state"`
	}
	if !c.decode(&req) {
		return
	}
	var cloak bool
	switch {
	case strings.EqualFold(req.State, "Cloaked"):
		cloak = true
	case !strings.EqualFold(req.State, "Active"):
		writeError(c.w, http.StatusBadRequest, "BadRequest", `state must be "Active" or "Cloaked"`)
		return
	}
	if !s.setCloak(c.id.xuid, cloak) {
		writeError(c.w, http.StatusServiceUnavailable, "ServiceUnavailable",
			"the mock holds as many cloaked users as its state has room for (at most "+strconv.Itoa(s.state.maxCloaks)+"); no other user's cloak is forgotten to make room")
		return
	}
	c.w.WriteHeader(http.StatusOK)
}

// setCloak cloaks or uncloaks xuid's presence, and tells RTA subscribers
// what changed of it as others see it. It reports false, changing
// nothing, for a cloak past the state's bound (maxCloaks).
func (w *world) setCloak(xuid string, cloak bool) bool {
	w.lapses.mu.Lock()
	defer w.lapses.mu.Unlock()
	before := w.toldOf(xuid)
	w.state.mu.Lock()
	done := true
	if cloak {
		done = w.state.cloak(xuid) // may evict records, the user's own too: told as others read them now
	} else {
		w.state.uncloak(xuid)
	}
	rec, ok := w.state.record(xuid)
	w.state.mu.Unlock()
	if !done {
		return false
	}
	after := w.presenceOf(xuid)
	w.rta.presenceChanged(xuid, before, after)
	w.forgetEvicted()
	// A lapse is timed for what subscribers were told is online: a cloak
	// tells them offline; an uncloak tells them online only if a get reads
	// the record so (not lapsed behind the cloak).
	w.stopLapse(xuid)
	if ok && after.State == "Online" {
		w.timeLapse(rec)
	}
	return true
}

// storePresence records rec, the user's cloak as it was (setCloak), and
// tells RTA subscribers what changed of it as others see it (presenceOf:
// nothing behind a cloak).
func (w *world) storePresence(rec presenceRecord) {
	w.lapses.mu.Lock()
	defer w.lapses.mu.Unlock()
	before := w.toldOf(rec.XUID)
	b, _ := json.Marshal(rec) // its size as stored
	w.state.mu.Lock()
	_, rec.Cloaked = w.state.cloaked[rec.XUID]
	stored := w.state.presence.put(rec.XUID, rec, int64(len(b)))
	w.state.mu.Unlock()
	w.rta.presenceChanged(rec.XUID, before, w.presenceOf(rec.XUID))
	w.forgetEvicted()
	if stored { // only a record the state holds is timed
		w.timeLapse(rec)
	}
}

// toldOf is xuid's presence as RTA subscribers were last told it: as a
// get reads it (presenceOf), but a record whose lapse is still timed is
// not lapsed yet (the timer fires the second after a get reads it
// lapsed; a clock that Config.Now moves by hand never fires it), so that
// a change in between still tells them it ended. The caller holds
// lapses.mu.
func (w *world) toldOf(xuid string) presenceRecord {
	w.state.mu.Lock()
	p, ok := w.state.record(xuid)
	w.state.mu.Unlock()
	_, timed := w.lapses.timers[xuid]
	return w.told(xuid, p, ok, timed)
}

// told is toldOf of the record p (ok: there is one), its lapse timed or
// not.
func (w *world) told(xuid string, p presenceRecord, ok, timed bool) presenceRecord {
	if ok && timed && !p.Cloaked {
		return p
	}
	return w.seen(xuid, p, ok)
}

// forgetEvicted tells RTA subscribers of each record the state evicted to
// make room for the change just made: a get reads its user as if they had
// no record (presenceOf), so they hear that, and its lapse is no longer
// timed. The caller holds lapses.mu.
func (w *world) forgetEvicted() {
	w.state.mu.Lock()
	gone := w.evicted
	w.evicted = nil
	for i, p := range gone {
		_, gone[i].Cloaked = w.state.cloaked[p.XUID] // the cloak as it is now, not as the record was stored
	}
	w.state.mu.Unlock()
	for _, p := range gone {
		_, timed := w.lapses.timers[p.XUID]
		w.stopLapse(p.XUID)
		w.rta.presenceChanged(p.XUID, w.told(p.XUID, p, true, timed), w.presenceOf(p.XUID))
	}
}

// stopLapse stops timing xuid's lapse. The caller holds lapses.mu.
func (w *world) stopLapse(xuid string) {
	if l := w.lapses.timers[xuid]; l != nil {
		l.stop()
		delete(w.lapses.timers, xuid)
	}
}

// stopLapses stops timing every lapse, the records gone (SetWorld,
// ResetWorld) or the server closed. The caller holds lapses.mu.
func (w *world) stopLapses() {
	for x := range w.lapses.timers {
		w.stopLapse(x)
	}
}

// presenceLapses times the lapse of each Online record (heartbeatExpiry
// after its title's last write), so that RTA subscribers hear the user go
// offline ("Scarlett:false", "Ended:TITLE") when a title stops writing, as
// when it clears its presence. mu also serialises every change that RTA
// subscribers hear of (presence, a world change, an MPSD session write)
// with the events it publishes, and with a subscribe's answer, so that
// subscribers hear changes in the order they were made, and after the
// answer. The timers are those of records the state holds (an evicted
// record's is stopped, forgetEvicted, before the writer's is timed; a
// reset stops them all), so there are never more than it holds records;
// each is a timer and its XUID: a few hundred bytes against the record's
// own.
type presenceLapses struct {
	mu     sync.Mutex
	timers map[string]*timerOn[world] // by XUID
}

// timeLapse times rec's lapse when it is Online and not cloaked (what
// subscribers were told), in place of the timer of the record before it.
// The caller holds lapses.mu.
func (w *world) timeLapse(rec presenceRecord) {
	w.stopLapse(rec.XUID)
	if w.rta == nil || rec.Cloaked || rec.State != "Online" || len(rec.Devices) == 0 || len(rec.Devices[0].Titles) == 0 {
		return // subscribers were not told it is online: nothing to tell them of its lapse
	}
	at, err := time.Parse(time.RFC3339, rec.Devices[0].Titles[0].LastModified)
	if err != nil {
		return
	}
	if w.lapses.timers == nil {
		w.lapses.timers = map[string]*timerOn[world]{}
	}
	xuid := rec.XUID
	var l *timerOn[world]
	l = newTimerOn(w, func(w *world) { w.lapse(xuid, l) })
	// The second after the record reads as lapsed (presenceOf), on the
	// mock's clock, timed from now (a clock that Config.Now moves by hand
	// does not fire it). The callback waits for lapses.mu, held until l is
	// in timers.
	l.arm(at.Add(heartbeatExpiry + time.Second).Sub(w.now()))
	w.lapses.timers[xuid] = l
}

// lapse tells RTA subscribers that xuid's record, timed by l, lapsed,
// unless a later change of their presence came first.
func (w *world) lapse(xuid string, l *timerOn[world]) {
	w.lapses.mu.Lock()
	defer w.lapses.mu.Unlock()
	if w.lapses.timers[xuid] != l {
		return // replaced by a later write
	}
	delete(w.lapses.timers, xuid)
	l.stop()
	w.state.mu.Lock()
	p, ok := w.state.record(xuid)
	w.state.mu.Unlock()
	if !ok || p.State != "Online" {
		return // cleared since (an eviction or a reset stops the timer)
	}
	w.rta.presenceChanged(xuid, w.told(xuid, p, ok, true), w.presenceOf(xuid))
}
