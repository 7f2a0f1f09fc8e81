package mock

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/xblgo/fgrl/internal/safetext"
)

// sessionWrite is the body of an MPSD PUT: the parts a caller may write.
type sessionWrite struct {
	Constants  map[string]any             `json:"constants"`
	Properties map[string]map[string]any  `json:"properties"`
	Members    map[string]json.RawMessage `json:"members"`
}

// session is a stored session document.
type session struct {
	ContractVersion int                       `json:"contractVersion"`
	CorrelationID   string                    `json:"correlationId"`
	ChangeNumber    int                       `json:"changeNumber"`
	StartTime       string                    `json:"startTime"`
	MembersInfo     membersInfo               `json:"membersInfo"`
	Constants       map[string]any            `json:"constants"`
	Properties      map[string]map[string]any `json:"properties"`
	Members         map[string]member         `json:"members"`
}

type membersInfo struct {
	First    int `json:"first"`
	Next     int `json:"next"`
	Count    int `json:"count"`
	Accepted int `json:"accepted"`
	Active   int `json:"active"`
}

type member struct {
	Roles         map[string]any `json:"roles,omitempty"`
	Constants     map[string]any `json:"constants"`
	Properties    map[string]any `json:"properties"`
	Gamertag      string         `json:"gamertag"`
	ActiveTitleID string         `json:"activeTitleId"`
	JoinTime      string         `json:"joinTime"`
}

// joiner is who writes a session, and when.
type joiner struct {
	xuid, title, gamertag string
	now                   time.Time
}

// maxMembers is the most members a mock session holds.
const maxMembers = 100

// mergeSession applies w, written by caller, to the stored document old (nil
// when the session is new) and returns the new document.
func mergeSession(old []byte, w *sessionWrite, by joiner) ([]byte, error) {
	caller, now := by.xuid, by.now
	s := session{ContractVersion: mpsdContract, StartTime: now.Format(time.RFC3339Nano),
		Properties: map[string]map[string]any{"system": {}, "custom": {}}, Members: map[string]member{}}
	if old != nil {
		if err := json.Unmarshal(old, &s); err != nil {
			return nil, err
		}
		if _, member := s.member(caller); !member && caller != "" && !joins(w) {
			return nil, errNotMember
		}
	} else {
		s.CorrelationID = fmt.Sprintf("%08x-0000-4000-8000-%012x", statValue(caller, s.StartTime), now.UnixNano()&0xffffffffffff)
		s.Constants = w.Constants
		if s.Constants == nil {
			s.Constants = map[string]any{"system": map[string]any{}, "custom": map[string]any{}}
		}
	}
	for part, kv := range w.Properties {
		if part != "system" && part != "custom" {
			return nil, errors.New(`properties holds only "system" and "custom"`)
		}
		if s.Properties[part] == nil {
			s.Properties[part] = map[string]any{}
		}
		for k, v := range kv {
			s.Properties[part][k] = v
		}
	}
	if err := s.writeMembers(w.Members, by); err != nil {
		return nil, err
	}
	s.ChangeNumber++
	return json.Marshal(&s)
}

// writeMembers adds, changes or (null) removes members; "me" is the caller,
// and a member named by its index must be the caller too.
func (s *session) writeMembers(ws map[string]json.RawMessage, by joiner) error {
	for _, k := range slices.Sorted(maps.Keys(ws)) {
		idx := k
		if k == "me" {
			idx = s.memberIndex(by.xuid)
		} else if m, ok := s.Members[k]; !ok {
			return fmt.Errorf("members: no member %s", safetext.Quote(k, 20))
		} else if sys, _ := m.Constants["system"].(map[string]any); sys == nil || sys["xuid"] != by.xuid {
			// A client writes its own entry only (MPSD's "me"): another
			// member's is theirs.
			return fmt.Errorf("members.%s is another member's entry: a caller writes its own, as members.me", safetext.Clip(k, 20))
		}
		if string(ws[k]) == "null" {
			delete(s.Members, idx)
			continue
		}
		var m member
		if err := json.Unmarshal(ws[k], &m); err != nil {
			return fmt.Errorf("members.%s: not a member object", safetext.Clip(k, 20))
		}
		s.setMember(idx, m, by)
		if len(s.Members) > maxMembers {
			return fmt.Errorf("a session holds at most %d members", maxMembers)
		}
	}
	s.countMembers()
	return nil
}

func (s *session) setMember(idx string, m member, by joiner) {
	cur, ok := s.Members[idx]
	if !ok { // constants are set once, when the member joins
		cur = member{Constants: m.Constants, Gamertag: by.gamertag, ActiveTitleID: by.title,
			JoinTime: by.now.Format(time.RFC3339Nano)}
		if cur.Constants == nil {
			cur.Constants = map[string]any{}
		}
		sys, _ := cur.Constants["system"].(map[string]any)
		if sys == nil {
			sys = map[string]any{}
		}
		sys["xuid"] = by.xuid
		sys["index"], _ = strconv.Atoi(idx)
		cur.Constants["system"] = sys
	}
	if m.Roles != nil {
		cur.Roles = m.Roles
	}
	if cur.Properties == nil {
		cur.Properties = map[string]any{}
	}
	for k, v := range m.Properties {
		cur.Properties[k] = v
	}
	s.Members[idx] = cur
}

// memberIndex returns the caller's member index, or the next free one.
func (s *session) memberIndex(xuid string) string {
	if idx, ok := s.member(xuid); ok {
		return idx
	}
	return strconv.Itoa(s.MembersInfo.Next)
}

// member returns xuid's member index, if xuid is a member.
func (s *session) member(xuid string) (string, bool) {
	for idx, m := range s.Members {
		if sys, _ := m.Constants["system"].(map[string]any); sys != nil && sys["xuid"] == xuid {
			return idx, true
		}
	}
	return "", false
}

// errNotMember refuses a user's write to a session that user is not a
// member of and does not join (members.me): MPSD answers it 403 with the
// session, which "can't be updated by the user, but it can be read" (the
// multiplayer session status codes). A service's write, which names no
// user, is taken.
var errNotMember = errors.New("the caller is not a member of the session and does not join it")

// joins reports whether w adds or changes the caller's own entry.
func joins(w *sessionWrite) bool {
	me, ok := w.Members["me"]
	return ok && string(me) != "null"
}

func (s *session) countMembers() {
	first, next := -1, s.MembersInfo.Next
	for idx := range s.Members {
		n, _ := strconv.Atoi(idx)
		if first < 0 || n < first {
			first = n
		}
		next = max(next, n+1)
	}
	s.MembersInfo = membersInfo{First: max(first, 0), Next: next, Count: len(s.Members),
		Accepted: len(s.Members), Active: len(s.Members)}
}
