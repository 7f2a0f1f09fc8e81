package mock

import (
	"net/http"
	"time"
)

// The presence service: GET /users/{me|xuid(N)}, POST /users/batch, and
// POST / DELETE /users/{me|xuid(N)}/devices/current/titles/current to set or
// clear the caller's presence (visible to later gets).

type presenceRecord struct {
	Xuid    string           `json:"xuid"`
	State   string           `json:"state"`
	Devices []presenceDevice `json:"devices,omitempty"`
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
	RichPresence string `json:"richPresence,omitempty"`
}

func presenceRoutes() []route {
	return []route{
		{http.MethodGet, re(`/users/` + userSeg), serveGetPresence},
		{http.MethodPost, re(`/users/batch`), serveBatchPresence},
		{http.MethodPost, re(`/users/` + userSeg + `/devices/current/titles/current`), serveSetPresence},
		{http.MethodDelete, re(`/users/` + userSeg + `/devices/current/titles/current`), serveClearPresence},
	}
}

func (h *Handler) presenceOf(xuid string) presenceRecord {
	h.state.mu.Lock()
	defer h.state.mu.Unlock()
	if p, ok := h.state.presence[xuid]; ok {
		return p
	}
	return presenceRecord{Xuid: xuid, State: "Offline"}
}

func serveGetPresence(h *Handler, c *call) {
	writeJSON(c.w, http.StatusOK, h.presenceOf(c.user(c.params[0])))
}

func serveBatchPresence(h *Handler, c *call) {
	var req struct {
		Users []string `json:"users"`
		Level string   `json:"level"`
	}
	if !c.decode(h, &req) {
		return
	}
	if len(req.Users) == 0 || len(req.Users) > 1100 {
		writeError(c.w, http.StatusBadRequest, "BadRequest", "users must hold 1 to 1100 xuids")
		return
	}
	out := make([]presenceRecord, 0, len(req.Users))
	for _, x := range req.Users {
		out = append(out, h.presenceOf(x))
	}
	writeJSON(c.w, http.StatusOK, out)
}

func serveSetPresence(h *Handler, c *call) {
	xuid := c.user(c.params[0])
	if xuid != c.id.xuid {
		writeError(c.w, http.StatusForbidden, "Forbidden", "a user may set only their own presence")
		return
	}
	var req struct {
		ID       string            `json:"id"`
		State    string            `json:"state"`
		Activity *presenceActivity `json:"activity"`
	}
	if !c.decode(h, &req) {
		return
	}
	if req.State == "" {
		req.State = "active"
	}
	title := presenceTitle{ID: c.id.title, Name: "Title " + c.id.title, Placement: "Full",
		State: req.State, LastModified: h.cfg.now().UTC().Format(time.RFC3339), Activity: req.Activity}
	rec := presenceRecord{Xuid: xuid, State: "Online",
		Devices: []presenceDevice{{Type: "Scarlett", Titles: []presenceTitle{title}}}}
	h.state.mu.Lock()
	room(h.state, h.state.presence, xuid)
	h.state.presence[xuid] = rec
	h.state.mu.Unlock()
	c.w.WriteHeader(http.StatusOK)
}

func serveClearPresence(h *Handler, c *call) {
	h.state.mu.Lock()
	delete(h.state.presence, c.id.xuid)
	h.state.mu.Unlock()
	c.w.WriteHeader(http.StatusOK)
}
