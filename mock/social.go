package mock

import (
	"fmt"
	"net/http"
	"strconv"
)

// The social service (GET /users/{me|xuid(N)}/people) and the privacy
// service (GET /users/{me|xuid(N)}/permission/validate?setting=S&target=xuid(M)).

type person struct {
	Xuid        string `json:"xuid"`
	IsFavorite  bool   `json:"isFavorite"`
	IsFollowing bool   `json:"isFollowingCaller"`
}

func socialRoutes() []route {
	return []route{{http.MethodGet, re(`/users/` + userSeg + `/people`), servePeople}}
}

// peopleOf returns three stable friends derived from the xuid.
func peopleOf(xuid string) []person {
	n, _ := strconv.ParseUint(xuid, 10, 64)
	out := make([]person, 3)
	for i := range out {
		out[i] = person{Xuid: fmt.Sprint(n + uint64(i) + 1), IsFavorite: i == 0, IsFollowing: true}
	}
	return out
}

func servePeople(h *Handler, c *call) {
	people := peopleOf(c.user(c.params[0]))
	writeJSON(c.w, http.StatusOK, struct {
		TotalCount int      `json:"totalCount"`
		People     []person `json:"people"`
	}{len(people), people})
}

func privacyRoutes() []route {
	return []route{{http.MethodGet, re(`/users/` + userSeg + `/permission/validate`), servePermission}}
}

type permissionReason struct {
	Reason string `json:"reason"`
}

func servePermission(h *Handler, c *call) {
	q := c.r.URL.Query()
	setting, target := q.Get("setting"), q.Get("target")
	if setting == "" || target == "" {
		writeError(c.w, http.StatusBadRequest, "BadRequest", "setting and target are required")
		return
	}
	// Every permission is granted except communicating with xuid(0), which
	// gives tests a refused case.
	allowed := c.user(target) != "0"
	reasons := []permissionReason{}
	if !allowed {
		reasons = append(reasons, permissionReason{Reason: "BlockedByTarget"})
	}
	writeJSON(c.w, http.StatusOK, struct {
		IsAllowed bool               `json:"isAllowed"`
		Reasons   []permissionReason `json:"reasons"`
	}{allowed, reasons})
}
