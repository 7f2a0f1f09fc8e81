package mock

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The multiplayer session directory, contract 107 (XSAPI
// multiplayer_service.cpp; Tests/UnitTests/Tests/Services/TestResponses/
// Multiplayer.json):
// GET and PUT /serviceconfigs/{scid}/sessiontemplates/{template}/sessions/{name},
// POST /handles (an invite or a search handle), POST /handles/query (a
// search) and DELETE /handles/{id}.
//
// A PUT merges the write into the session: constants are set when the
// session is created, properties' "system" and "custom" objects are merged
// key by key, and members are added, changed or (null) removed, "me" standing
// for the caller. The answer is the whole session as stored, with the
// service's own fields (contractVersion, correlationId, changeNumber,
// startTime, membersInfo): 201 when it created the session, 200 otherwise.

// mpsdService answers the multiplayer session directory.
type mpsdService struct{ *world }

func (s mpsdService) routes() []route {
	p := pat("/serviceconfigs/{}/sessiontemplates/{}/sessions/{}")
	return []route{
		{http.MethodGet, p, s.serveGetSession, "107"},
		{http.MethodPut, p, s.servePutSession, "107"},
		{http.MethodPost, pat("/handles"), s.serveCreateHandle, "107 (invite; search)"},
		{http.MethodDelete, pat("/handles/{}"), s.serveDeleteHandle, "107"},
	}
}

// searchHandleService answers MPSD's search handle queries, POST
// /handles/query, which has its own counter.
type searchHandleService struct{ *world }

func (s searchHandleService) routes() []route {
	return []route{{http.MethodPost, pat("/handles/query"), s.serveHandleQuery, "107"}}
}

const (
	mpsdContract    = 107
	inviteLifetime  = time.Hour
	maxSessionBytes = 64 << 10 // a session document's size
)

type sessionRef struct {
	Scid         string `json:"scid"`
	TemplateName string `json:"templateName"`
	Name         string `json:"name"`
}

func (r *sessionRef) valid() bool { return r.Scid != "" && r.TemplateName != "" && r.Name != "" }

type inviteHandle struct {
	Type             string         `json:"type"`
	SessionRef       sessionRef     `json:"sessionRef"`
	Version          int            `json:"version"`
	InviteAttributes map[string]any `json:"inviteAttributes"`
	Expiration       string         `json:"expiration"`
	ID               string         `json:"id"`
	InvitedXuid      string         `json:"invitedXuid"`
	SenderXuid       string         `json:"senderXuid"`
}

// serveCreateHandle creates an invite handle (201 with the handle) or a
// search handle (searchhandle.go), as the body's type says.
func (s mpsdService) serveCreateHandle(c *call) {
	var body json.RawMessage
	if !c.decode(&body) {
		return
	}
	var kind struct {
		Type string `json:"type"`
	}
	json.Unmarshal(body, &kind)
	if kind.Type == "search" {
		s.serveCreateSearchHandle(c, body)
		return
	}
	var req struct {
		Type             string         `json:"type"`
		SessionRef       sessionRef     `json:"sessionRef"`
		Version          int            `json:"version"`
		InvitedXuid      string         `json:"invitedXuid"`
		InviteAttributes map[string]any `json:"inviteAttributes"`
	}
	if json.Unmarshal(body, &req) != nil {
		writeError(c.w, http.StatusBadRequest, "BadRequest", "the handle is not a JSON object of the invite's shape")
		return
	}
	title, _ := req.InviteAttributes["titleId"].(string)
	switch {
	case req.Type != "invite" || req.Version != 1 || !req.SessionRef.valid():
		writeError(c.w, http.StatusBadRequest, "BadRequest", `type "invite", version 1 and a sessionRef are required`)
		return
	case !decimal(req.InvitedXuid):
		writeError(c.w, http.StatusBadRequest, "BadRequest", "invitedXuid must be a decimal XUID")
		return
	case title != c.id.title:
		writeError(c.w, http.StatusBadRequest, "BadRequest", "inviteAttributes.titleId must be the caller's title, as a string")
		return
	}
	if s.refuseOtherTitlesSCID(c, req.SessionRef.Scid) {
		return
	}
	now := s.now().UTC()
	writeJSON(c.w, http.StatusCreated, inviteHandle{
		Type: "invite", SessionRef: req.SessionRef, Version: 1, InviteAttributes: req.InviteAttributes,
		Expiration:  now.Add(inviteLifetime).Format(time.RFC3339Nano),
		ID:          fmt.Sprintf("%08x-0000-4000-8000-%012x", statValue(req.SessionRef.Name, req.InvitedXuid), now.UnixNano()&0xffffffffffff),
		InvitedXuid: req.InvitedXuid, SenderXuid: c.id.xuid,
	})
}

func decimal(s string) bool {
	_, err := strconv.ParseUint(s, 10, 64)
	return err == nil
}

func sessionKey(c *call) string {
	return strings.ToLower(strings.Join(c.params, "/"))
}

func (s mpsdService) serveGetSession(c *call) {
	s.state.mu.Lock()
	doc, ok := s.state.sessions.get(sessionKey(c))
	s.state.mu.Unlock()
	if !ok {
		writeError(c.w, http.StatusNotFound, "NotFound", "no such session")
		return
	}
	writeRaw(c.w, http.StatusOK, doc)
}

func (s mpsdService) servePutSession(c *call) {
	var write sessionWrite
	if !c.decode(&write) {
		return
	}
	if write.Members == nil && write.Properties == nil && write.Constants == nil {
		writeError(c.w, http.StatusBadRequest, "BadRequest", "the session write is empty or not a JSON object")
		return
	}
	if s.refuseOtherTitlesSCID(c, c.params[0]) {
		return
	}
	key := sessionKey(c)
	doc, existed, err := s.writeSession(key, c, &write)
	switch {
	case errors.Is(err, errNotMember): // the session as stored: it can be read, not updated
		writeRaw(c.w, http.StatusForbidden, doc)
		return
	case err != nil:
		writeError(c.w, http.StatusBadRequest, "BadRequest", err.Error())
		return
	}
	status := http.StatusCreated
	if existed {
		status = http.StatusOK
	}
	writeRaw(c.w, status, doc)
}

// writeSession merges write into the session under key and taps its
// members, under the lock every change that publishes to RTA takes
// (presenceLapses.mu), as a subscribe's answer is: no tap precedes the
// answer of a subscribe made meanwhile, and two writes' taps go out in the
// order of their writes. The answer is written after, without the lock: a
// client slow to read it holds up no one.
func (s mpsdService) writeSession(key string, c *call, write *sessionWrite) (doc []byte, existed bool, err error) {
	s.lapses.mu.Lock()
	defer s.lapses.mu.Unlock()
	s.state.mu.Lock()
	old, existed := s.state.sessions.get(key)
	doc, err = mergeSession(old, write, joiner{c.id.xuid, c.id.title, s.gamertagOf(c.id.xuid), s.now().UTC()})
	if errors.Is(err, errNotMember) {
		doc = old
	}
	if err == nil && len(doc) > maxSessionBytes {
		err = fmt.Errorf("the session would be larger than %d bytes", maxSessionBytes)
	}
	if err == nil && !s.state.sessions.put(key, doc, int64(len(doc))) {
		// Its name and document are over what the mock keeps of sessions
		// (Config.MaxStateBytes): refused, not answered as stored.
		err = fmt.Errorf("the session and its name (%d bytes) are more than the mock keeps of sessions (Config.MaxStateBytes)", len(doc)+len(key))
		doc = nil
	}
	s.state.mu.Unlock()
	if err == nil {
		s.rta.sessionChanged(c.params, old, doc)
	}
	return doc, existed, err
}

// smartmatchService answers SmartMatch.
type smartmatchService struct{ *world }

func (s smartmatchService) routes() []route {
	return []route{{http.MethodPost, pat("/serviceconfigs/{}/hoppers/{}"), s.serveCreateTicket, "103"}}
}

// serveCreateTicket creates a SmartMatch ticket from the body XSAPI sends
// (matchmaking_service.cpp; MatchmakingTests.cpp).
func (s smartmatchService) serveCreateTicket(c *call) {
	var req struct {
		GiveUpDuration   *int           `json:"giveUpDuration"`
		PreserveSession  string         `json:"preserveSession"`
		TicketSessionRef *sessionRef    `json:"ticketSessionRef"`
		TicketAttributes map[string]any `json:"ticketAttributes"`
	}
	if !c.decode(&req) {
		return
	}
	p := strings.ToLower(req.PreserveSession)
	if req.GiveUpDuration == nil || *req.GiveUpDuration < 1 || (p != "always" && p != "never") ||
		req.TicketSessionRef == nil || !req.TicketSessionRef.valid() {
		writeError(c.w, http.StatusBadRequest, "BadRequest",
			`giveUpDuration (seconds), preserveSession ("always" or "never") and ticketSessionRef are required`)
		return
	}
	if s.refuseOtherTitlesSCID(c, c.params[0]) || s.refuseOtherTitlesSCID(c, req.TicketSessionRef.Scid) {
		return
	}
	writeJSON(c.w, http.StatusOK, struct {
		TicketID string `json:"ticketId"`
		WaitTime int    `json:"waitTime"`
	}{fmt.Sprintf("%08x-0000-4000-8000-%012x", statValue(c.id.xuid, c.params[1]), s.now().UnixNano()&0xffffffffffff), 60})
}
