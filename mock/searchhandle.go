package mock

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/xblgo/fgrl/internal/safetext"
)

// MPSD search handles as XSAPI sends them (multiplayer_service.cpp,
// multiplayer_search_handle_request.cpp, MultiplayerTests.cpp; the shapes of
// Tests/UnitTests/Tests/Services/TestResponses/Multiplayer.json
// searchHandleJson and searchHandlesResponseJson):
//
//   - POST /handles {"type": "search", "version": 1, "sessionRef",
//     "searchAttributes": {"tags", "strings", "numbers"}} makes a session
//     findable: 201 with the handle (its id, createTime, and the session's
//     custom properties and related information), 404 when the session
//     does not exist;
//   - POST /handles/query {"type": "search", "scid", "templateName",
//     "orderBy", "filter"} answers the handles of that template whose
//     attributes match the filter (searchfilter.go), ordered by orderBy
//     ("Numbers/NAME asc", "Strings/NAME desc"; by creation time by
//     default);
//   - DELETE /handles/{id} removes a handle its creator made: 204, 404 for
//     one that does not exist, 403 for another user's.
//
// The mock's sessions have no roles, so a handle has no roleInfo.

// searchHandle is a stored search handle.
type searchHandle struct {
	Type             string            `json:"type"`
	SessionRef       sessionRef        `json:"sessionRef"`
	SearchAttributes searchAttributes  `json:"searchAttributes"`
	Version          int               `json:"version"`
	ID               string            `json:"id"`
	CreateTime       string            `json:"createTime"`
	CustomProperties json.RawMessage   `json:"customProperties"` // as JSON: its bytes are what it holds (a map of many small objects held many times its JSON)
	RelatedInfo      handleRelatedInfo `json:"relatedInfo"`

	creator string
	members []string
}

type searchAttributes struct {
	Tags    []string           `json:"tags"`
	Strings map[string]string  `json:"strings"`
	Numbers map[string]float64 `json:"numbers"`
}

type handleRelatedInfo struct {
	JoinRestriction string   `json:"joinRestriction"`
	Closed          bool     `json:"closed"`
	MaxMembersCount int      `json:"maxMembersCount"`
	MembersCount    int      `json:"membersCount"`
	Visibility      string   `json:"visibility"`
	SessionOwners   []string `json:"sessionOwners"`
}

// Bounds of search handles.
const (
	maxSearchAttributes = 100
	maxSearchField      = 1000 // XSAPI XBL_MULTIPLAYER_SEARCH_HANDLE_MAX_FIELD_LENGTH's order
)

func (h *searchHandle) hasTag(tag string) bool {
	return slices.ContainsFunc(h.SearchAttributes.Tags, func(t string) bool { return strings.EqualFold(t, tag) })
}

func (h *searchHandle) stringAttr(name string) (string, bool) {
	for k, v := range h.SearchAttributes.Strings {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return "", false
}

func (h *searchHandle) hasXUID(x string, owners bool) bool {
	if owners {
		return slices.Contains(h.RelatedInfo.SessionOwners, x)
	}
	return slices.Contains(h.members, x)
}

func (a *searchAttributes) check() string {
	if len(a.Tags)+len(a.Strings)+len(a.Numbers) > maxSearchAttributes {
		return fmt.Sprintf("at most %d search attributes", maxSearchAttributes)
	}
	for _, t := range a.Tags {
		if t == "" || len(t) > maxSearchField {
			return "a tag is 1 to 1000 bytes"
		}
	}
	for k, v := range a.Strings {
		if k == "" || len(k) > maxSearchField || len(v) > maxSearchField {
			return "a string attribute's name and value are at most 1000 bytes"
		}
	}
	for k := range a.Numbers {
		if k == "" || len(k) > maxSearchField {
			return "a number attribute's name is 1 to 1000 bytes"
		}
	}
	return ""
}

// serveCreateSearchHandle answers POST /handles with type "search".
func (s mpsdService) serveCreateSearchHandle(c *call, body []byte) {
	var req searchHandle
	if err := json.Unmarshal(body, &req); err != nil || req.Version != 1 || !req.SessionRef.valid() {
		writeError(c.w, http.StatusBadRequest, "BadRequest", `a search handle needs type "search", version 1 and a sessionRef`)
		return
	}
	if bad := req.SearchAttributes.check(); bad != "" {
		writeError(c.w, http.StatusBadRequest, "BadRequest", bad)
		return
	}
	if s.refuseOtherTitlesSCID(c, req.SessionRef.Scid) {
		return
	}
	ref := req.SessionRef
	s.state.mu.Lock()
	doc, ok := s.state.sessions.get(strings.ToLower(ref.Scid + "/" + ref.TemplateName + "/" + ref.Name))
	s.state.mu.Unlock()
	if !ok {
		writeError(c.w, http.StatusNotFound, "NotFound", "no such session to search for")
		return
	}
	now := s.now().UTC()
	sh := &searchHandle{Type: "search", SessionRef: ref, SearchAttributes: req.SearchAttributes, Version: 1,
		CreateTime: now.Format(time.RFC3339Nano), creator: c.id.xuid}
	sh.fillFromSession(doc)
	if sh.SearchAttributes.Tags == nil {
		sh.SearchAttributes.Tags = []string{}
	}
	s.state.mu.Lock()
	for { // an id no handle holds: a number of the mock's own, then the clock
		s.state.handleSeq++
		sh.ID = fmt.Sprintf("%08x-0000-4000-8000-%012x", s.state.handleSeq, now.UnixNano()&0xffffffffffff)
		if _, taken := s.state.handles.get(sh.ID); !taken {
			break
		}
	}
	b, _ := json.Marshal(sh)
	s.state.handles.put(sh.ID, sh, int64(len(b)+16*len(sh.members)))
	s.state.mu.Unlock()
	writeRaw(c.w, http.StatusCreated, b)
}

// fillFromSession copies what a handle tells of its session: the custom
// properties, size, visibility, join restriction ("None" when the session
// sets none, as XSAPI's Multiplayer.json records a handle's; XSAPI reads it
// without case), and who is in it.
func (sh *searchHandle) fillFromSession(doc json.RawMessage) {
	var s session
	json.Unmarshal(doc, &s)
	sys, _ := s.Constants["system"].(map[string]any)
	maxMembers, _ := sys["maxMembersCount"].(float64)
	sh.CustomProperties = json.RawMessage("{}")
	if custom := s.Properties["custom"]; custom != nil {
		if b, err := json.Marshal(custom); err == nil {
			sh.CustomProperties = b
		}
	}
	jr, _ := s.Properties["system"]["joinRestriction"].(string)
	closed, _ := s.Properties["system"]["closed"].(bool)
	vis, _ := sys["visibility"].(string)
	sh.RelatedInfo = handleRelatedInfo{JoinRestriction: cmp.Or(jr, "None"), Closed: closed, MaxMembersCount: int(maxMembers),
		MembersCount: len(s.Members), Visibility: cmp.Or(vis, "open"), SessionOwners: []string{}}
	for _, k := range slices.Sorted(maps.Keys(s.Members)) {
		msys, _ := s.Members[k].Constants["system"].(map[string]any)
		if x, _ := msys["xuid"].(string); x != "" {
			sh.members = append(sh.members, x)
		}
	}
	if len(sh.members) > 0 {
		sh.RelatedInfo.SessionOwners = sh.members[:1]
	}
}

// serveHandleQuery answers POST /handles/query.
func (s searchHandleService) serveHandleQuery(c *call) {
	var req struct {
		Type         string `json:"type"`
		Scid         string `json:"scid"`
		TemplateName string `json:"templateName"`
		OrderBy      string `json:"orderBy"`
		Filter       string `json:"filter"`
	}
	if !c.decode(&req) {
		return
	}
	if !strings.EqualFold(req.Type, "search") || req.Scid == "" || req.TemplateName == "" {
		writeError(c.w, http.StatusBadRequest, "BadRequest", `a query needs type "search", scid and templateName`)
		return
	}
	match, err := parseFilter(req.Filter)
	if err != nil {
		writeError(c.w, http.StatusBadRequest, "BadRequest", err.Error())
		return
	}
	order, err := parseOrderBy(req.OrderBy)
	if err != nil {
		writeError(c.w, http.StatusBadRequest, "BadRequest", err.Error())
		return
	}
	var found []*searchHandle
	s.state.mu.Lock()
	for _, id := range s.state.handles.withPrefix("") {
		sh, _ := s.state.handles.get(id)
		if strings.EqualFold(sh.SessionRef.Scid, req.Scid) && strings.EqualFold(sh.SessionRef.TemplateName, req.TemplateName) && match(sh) {
			found = append(found, sh)
		}
	}
	s.state.mu.Unlock()
	slices.SortStableFunc(found, order)
	if found == nil {
		found = []*searchHandle{}
	}
	writeJSON(c.w, http.StatusOK, struct {
		Results []*searchHandle `json:"results"`
	}{found})
}

// parseOrderBy reads "Numbers/NAME asc", "Strings/NAME desc" or
// "Timestamp asc" (the default, by creation time).
func parseOrderBy(s string) (func(a, b *searchHandle) int, error) {
	field, dir, _ := strings.Cut(strings.TrimSpace(s), " ")
	desc := strings.EqualFold(strings.TrimSpace(dir), "desc")
	if d := strings.TrimSpace(dir); d != "" && !desc && !strings.EqualFold(d, "asc") {
		return nil, fmt.Errorf("orderBy: want asc or desc, not %s", safetext.Quote(d, 40))
	}
	kind, name, _ := strings.Cut(field, "/")
	var by func(a, b *searchHandle) int
	switch strings.ToLower(kind) {
	case "", "timestamp":
		by = func(a, b *searchHandle) int { return strings.Compare(a.CreateTime, b.CreateTime) }
	case "numbers":
		by = func(a, b *searchHandle) int {
			return cmpFloat(a.SearchAttributes.Numbers[name], b.SearchAttributes.Numbers[name])
		}
	case "strings":
		by = func(a, b *searchHandle) int {
			x, _ := a.stringAttr(name)
			y, _ := b.stringAttr(name)
			return strings.Compare(strings.ToLower(x), strings.ToLower(y))
		}
	default:
		return nil, fmt.Errorf("orderBy: want Numbers/NAME, Strings/NAME or Timestamp, not %s", safetext.Quote(field, 40))
	}
	if desc {
		return func(a, b *searchHandle) int { return by(b, a) }, nil
	}
	return by, nil
}

// serveDeleteHandle answers DELETE /handles/{id}.
func (s mpsdService) serveDeleteHandle(c *call) {
	id := c.params[0]
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	sh, ok := s.state.handles.get(id)
	switch {
	case !ok:
		writeError(c.w, http.StatusNotFound, "NotFound", "no such handle")
	case sh.creator != c.id.xuid:
		writeError(c.w, http.StatusForbidden, "Forbidden", "only the handle's creator may delete it")
	default:
		s.state.handles.delete(id)
		c.w.WriteHeader(http.StatusNoContent)
	}
}
