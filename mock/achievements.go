package mock

import (
	"fmt"
	"net/http"
	"strconv"
)

// The achievements service (contract version 2):
// GET /users/xuid(N)/achievements?titleId=T&maxItems=M&continuationToken=C,
// GET /users/xuid(N)/achievements/{scid}/{id}, and
// POST /users/xuid(N)/achievements/{scid}/update, whose progress persists.

const achievementsPerTitle = 5

type achievement struct {
	ID                string             `json:"id"`
	ServiceConfigID   string             `json:"serviceConfigId"`
	Name              string             `json:"name"`
	TitleAssociations []titleAssociation `json:"titleAssociations"`
	ProgressState     string             `json:"progressState"`
	Progression       progression        `json:"progression"`
	Rewards           []reward           `json:"rewards"`
}

type titleAssociation struct {
	Name string `json:"name"`
	ID   int64  `json:"id"`
}

type progression struct {
	Requirements []requirement `json:"requirements"`
	TimeUnlocked string        `json:"timeUnlocked"`
}

type requirement struct {
	ID      string `json:"id"`
	Current string `json:"current"`
	Target  string `json:"target"`
}

type reward struct {
	Value string `json:"value"`
	Type  string `json:"type"`
}

type pagingInfo struct {
	ContinuationToken *string `json:"continuationToken"`
	TotalRecords      int     `json:"totalRecords"`
}

func achievementRoutes() []route {
	x := `/users/xuid\((\d{1,20})\)/achievements`
	return []route{
		{http.MethodGet, re(x), serveAchievements},
		{http.MethodGet, re(x + `/([^/]+)/([^/]+)`), serveAchievement},
		{http.MethodPost, re(x + `/([^/]+)/update`), serveAchievementUpdate},
	}
}

// SCID returns the service configuration ID the mock gives a title.
func SCID(titleID string) string {
	n, _ := strconv.ParseUint(titleID, 10, 64)
	return fmt.Sprintf("00000000-0000-0000-0000-%012x", n)
}

func (h *Handler) achievementsOf(xuid, title string) []achievement {
	h.state.mu.Lock()
	progress := h.state.progress[xuid+"/"+title]
	out := make([]achievement, achievementsPerTitle)
	for i := range out {
		id := strconv.Itoa(i + 1)
		out[i] = makeAchievement(title, id, progress[id])
	}
	h.state.mu.Unlock()
	return out
}

func makeAchievement(title, id string, pct int) achievement {
	tid, _ := strconv.ParseInt(title, 10, 64)
	state := "NotStarted"
	switch {
	case pct >= 100:
		state = "Achieved"
	case pct > 0:
		state = "InProgress"
	}
	return achievement{
		ID: id, ServiceConfigID: SCID(title), Name: "Achievement " + id,
		TitleAssociations: []titleAssociation{{Name: "Title " + title, ID: tid}},
		ProgressState:     state,
		Progression: progression{Requirements: []requirement{{ID: "00000000-0000-0000-0000-000000000000",
			Current: strconv.Itoa(pct), Target: "100"}}, TimeUnlocked: "0001-01-01T00:00:00.0000000Z"},
		Rewards: []reward{{Value: "10", Type: "Gamerscore"}},
	}
}

func serveAchievements(h *Handler, c *call) {
	q := c.r.URL.Query()
	title := q.Get("titleId")
	if title == "" {
		title = c.id.title
	}
	all := h.achievementsOf(c.params[0], title)
	start, end, next, ok := page(c, len(all))
	if !ok {
		return
	}
	writeJSON(c.w, http.StatusOK, struct {
		Achievements []achievement `json:"achievements"`
		PagingInfo   pagingInfo    `json:"pagingInfo"`
	}{all[start:end], pagingInfo{next, len(all)}})
}

func serveAchievement(h *Handler, c *call) {
	scid, id := c.params[1], c.params[2]
	if scid != SCID(c.id.title) {
		writeError(c.w, http.StatusNotFound, "NotFound", "no such service configuration")
		return
	}
	for _, a := range h.achievementsOf(c.params[0], c.id.title) {
		if a.ID == id {
			writeJSON(c.w, http.StatusOK, struct {
				Achievement achievement `json:"achievement"`
			}{a})
			return
		}
	}
	writeError(c.w, http.StatusNotFound, "NotFound", "no such achievement")
}

func serveAchievementUpdate(h *Handler, c *call) {
	xuid := c.params[0]
	if xuid != c.id.xuid {
		writeError(c.w, http.StatusForbidden, "Forbidden", "a user may update only their own achievements")
		return
	}
	var req struct {
		Achievements []struct {
			ID              string `json:"id"`
			PercentComplete int    `json:"percentComplete"`
		} `json:"achievements"`
	}
	if !c.decode(h, &req) {
		return
	}
	changed := false
	h.state.mu.Lock()
	key := xuid + "/" + c.id.title
	room(h.state, h.state.progress, key)
	p := h.state.progress[key]
	if p == nil {
		p = make(map[string]int)
		h.state.progress[key] = p
	}
	for _, a := range req.Achievements {
		n, err := strconv.Atoi(a.ID)
		if err != nil || n < 1 || n > achievementsPerTitle || a.PercentComplete < 0 || a.PercentComplete > 100 {
			h.state.mu.Unlock()
			writeError(c.w, http.StatusBadRequest, "BadRequest", "unknown achievement or percentComplete outside 0..100")
			return
		}
		if a.PercentComplete > p[a.ID] { // progress never goes back
			p[a.ID] = a.PercentComplete
			changed = true
		}
	}
	h.state.mu.Unlock()
	if !changed {
		c.w.WriteHeader(http.StatusNotModified)
		return
	}
	c.w.WriteHeader(http.StatusOK)
}

// page reads maxItems and continuationToken (an offset) for a list of total
// items; on bad input it answers 400 and returns ok false.
func page(c *call, total int) (start, end int, next *string, ok bool) {
	q := c.r.URL.Query()
	maxItems := 100
	if s := q.Get("maxItems"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 1000 {
			writeError(c.w, http.StatusBadRequest, "BadRequest", "maxItems must be 1 to 1000")
			return 0, 0, nil, false
		}
		maxItems = n
	}
	if s := q.Get("continuationToken"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || n > total {
			writeError(c.w, http.StatusBadRequest, "BadRequest", "bad continuationToken")
			return 0, 0, nil, false
		}
		start = n
	}
	end = min(total, start+maxItems)
	if end < total {
		tok := strconv.Itoa(end)
		next = &tok
	}
	return start, end, next, true
}
