package mock

import (
	"encoding/json"
	"net/http"
	"strings"
)

// The multiplayer session directory:
// GET and PUT /serviceconfigs/{scid}/sessiontemplates/{template}/sessions/{name}.
// A PUT stores the session document (a JSON object) and answers 201 when it
// creates it, 200 when it replaces it; a GET returns it or 404.

func mpsdRoutes() []route {
	p := re(`/serviceconfigs/([^/]+)/sessiontemplates/([^/]+)/sessions/([^/]+)`)
	return []route{
		{http.MethodGet, p, serveGetSession},
		{http.MethodPut, p, servePutSession},
		{http.MethodPost, re(`/handles`), serveCreateHandle},
	}
}

// searchHandleRoutes serve POST /handles/query, which has its own counter.
func searchHandleRoutes() []route {
	return []route{{http.MethodPost, re(`/handles/query`), serveHandleQuery}}
}

// serveCreateHandle creates an invite (or activity) handle: 201 with its id.
func serveCreateHandle(h *Handler, c *call) {
	var req struct {
		Type       string `json:"type"`
		SessionRef struct {
			Scid         string `json:"scid"`
			TemplateName string `json:"templateName"`
			Name         string `json:"name"`
		} `json:"sessionRef"`
		InvitedXuid string `json:"invitedXuid"`
	}
	if !c.decode(h, &req) {
		return
	}
	if req.Type == "" || req.SessionRef.Name == "" {
		writeError(c.w, http.StatusBadRequest, "BadRequest", "type and sessionRef are required")
		return
	}
	writeJSON(c.w, http.StatusCreated, struct {
		ID   string `json:"id"`
		Type string `json:"type"`
	}{"handle-" + req.SessionRef.Name + "-" + req.InvitedXuid, req.Type})
}

func serveHandleQuery(h *Handler, c *call) {
	var req map[string]json.RawMessage
	if !c.decode(h, &req) {
		return
	}
	writeJSON(c.w, http.StatusOK, struct {
		Results []json.RawMessage `json:"results"`
	}{[]json.RawMessage{}})
}

func smartmatchRoutes() []route {
	return []route{{http.MethodPost, re(`/serviceconfigs/([^/]+)/hoppers/([^/]+)`), serveCreateTicket}}
}

// serveCreateTicket creates a SmartMatch ticket.
func serveCreateTicket(h *Handler, c *call) {
	var req map[string]json.RawMessage
	if !c.decode(h, &req) {
		return
	}
	writeJSON(c.w, http.StatusOK, struct {
		TicketID string `json:"ticketId"`
		WaitTime int    `json:"waitTime"`
	}{"ticket-" + c.id.xuid + "-" + c.params[1], 60})
}

func sessionKey(c *call) string {
	return strings.ToLower(strings.Join(c.params, "/"))
}

func serveGetSession(h *Handler, c *call) {
	h.state.mu.Lock()
	doc, ok := h.state.sessions[sessionKey(c)]
	h.state.mu.Unlock()
	if !ok {
		writeError(c.w, http.StatusNotFound, "NotFound", "no such session")
		return
	}
	c.w.Header().Set("Content-Type", "application/json; charset=utf-8")
	c.w.WriteHeader(http.StatusOK)
	c.w.Write(doc)
}

func servePutSession(h *Handler, c *call) {
	var doc map[string]json.RawMessage
	if !c.decode(h, &doc) {
		return
	}
	if doc == nil {
		writeError(c.w, http.StatusBadRequest, "BadRequest", "the session must be a JSON object")
		return
	}
	b, _ := json.Marshal(doc)
	key := sessionKey(c)
	h.state.mu.Lock()
	_, existed := h.state.sessions[key]
	room(h.state, h.state.sessions, key)
	h.state.sessions[key] = b
	h.state.mu.Unlock()
	status := http.StatusCreated
	if existed {
		status = http.StatusOK
	}
	c.w.Header().Set("Content-Type", "application/json; charset=utf-8")
	c.w.WriteHeader(status)
	c.w.Write(b)
}
