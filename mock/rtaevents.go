package mock

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
)

// What the RTA service tells subscribers, from the world: who may
// subscribe to what, the state that answers a subscribe, and the events a
// change makes. Shapes: XSAPI's subscriptions
// (Source/Services/Presence/device_presence_change_subscription.cpp,
// title_presence_change_subscription.cpp, Social/
// social_relationship_change_subscription.cpp, Multiplayer/
// multiplayer_subscription.cpp) and their tests
// (Tests/UnitTests/Tests/Services/PresenceTests.cpp, MultiplayerTests.cpp).
//
// A user sees their own resources, and the presence of the users they
// follow (their friends and follows, as the social service lists them):
// XSAPI's social manager subscribes to the presence of the users in its
// graph. Another user's relationships, or the presence of a user not
// followed, are answered NoResourceData (XSAPI: E_XBL_RTA_ACCESS_DENIED).
// MPSD's shoulder taps go to the members of the session changed, on the
// connections that subscribed to sessiondirectory.xboxlive.com/connections/.
//
// Rich presence is no RTA resource of XSAPI's: it reaches a subscriber in
// the presence record that answers the subscribe, and by re-reading.

// rtaVisible reports whether caller may subscribe to r.
func (w *world) rtaVisible(caller string, r rtaResource) bool {
	switch r.kind {
	case rtaSessions:
		return true
	case rtaFriends:
		return r.xuid == caller
	}
	return r.xuid == caller || w.follows(caller, r.xuid)
}

// follows reports whether a follows b.
func (w *world) follows(a, b string) bool {
	return slices.ContainsFunc(w.peopleOf(a), func(p person) bool { return p.XUID == b })
}

// rtaState is the data that answers a subscribe to r: the presence record
// for presence, the connection id for MPSD (XSAPI reads "ConnectionId"),
// null for relationships.
func (w *world) rtaState(r rtaResource, connID string) any {
	switch r.kind {
	case rtaDevices, rtaTitle:
		return w.presenceOf(r.xuid)
	case rtaSessions:
		return map[string]string{"ConnectionId": connID}
	}
	return nil
}

// presenceView is what presence subscribers follow of a record: online,
// and the titles it is active in.
func presenceView(p presenceRecord) (online bool, titles []string) {
	if p.State != "Online" {
		return false, nil
	}
	for _, d := range p.Devices {
		for _, t := range d.Titles {
			titles = append(titles, t.ID)
		}
	}
	return true, titles
}

// presenceChanged publishes what changed from before to after in xuid's
// presence: a device event ("Scarlett:true") when they came online or went
// offline, a title event ("Started:TITLE", "Ended:TITLE") for each title
// they started or ended.
func (hub *rtaHub) presenceChanged(xuid string, before, after presenceRecord) {
	if hub == nil {
		return
	}
	on0, t0 := presenceView(before)
	on1, t1 := presenceView(after)
	visible := func(x string) bool { return hub.w.rtaVisible(x, rtaResource{kind: rtaDevices, xuid: xuid}) }
	if on0 != on1 {
		state := "false"
		if on1 {
			state = "true"
		}
		hub.publish(rtaResource{kind: rtaDevices, xuid: xuid}.key(), visible, deviceType+":"+state)
	}
	for _, t := range t1 {
		if !slices.Contains(t0, t) {
			hub.publish(rtaResource{kind: rtaTitle, xuid: xuid, title: t}.key(), visible, "Started:"+t)
		}
	}
	for _, t := range t0 {
		if !slices.Contains(t1, t) {
			hub.publish(rtaResource{kind: rtaTitle, xuid: xuid, title: t}.key(), visible, "Ended:"+t)
		}
	}
}

// relationsOf is xuid's relationships as friends subscribers follow them:
// each followed XUID, and whether a favorite.
func (w *world) relationsOf(xuid string) map[string]bool {
	out := map[string]bool{}
	for _, p := range w.peopleOf(xuid) {
		out[p.XUID] = p.IsFavorite
	}
	return out
}

// rtaSnapshot is what the subscribers follow, before a change of the
// whole world: each subscribed user's presence and relationships.
type rtaSnapshot struct {
	presence  map[string]presenceRecord
	relations map[string]map[string]bool
}

// snapshot reads what the subscribers follow now, as they were told it
// (toldOf). The caller holds the world's lapses.mu.
func (hub *rtaHub) snapshot() rtaSnapshot {
	s := rtaSnapshot{presence: map[string]presenceRecord{}, relations: map[string]map[string]bool{}}
	var subjects []rtaResource
	if hub != nil {
		hub.mu.Lock()
		for _, f := range hub.follows {
			subjects = append(subjects, f.res)
		}
		hub.mu.Unlock()
	}
	for _, r := range subjects {
		switch r.kind {
		case rtaDevices, rtaTitle:
			if _, ok := s.presence[r.xuid]; !ok {
				s.presence[r.xuid] = hub.w.toldOf(r.xuid) // under lapses.mu (SetWorld, ResetWorld)
			}
		case rtaFriends:
			if _, ok := s.relations[r.xuid]; !ok {
				s.relations[r.xuid] = hub.w.relationsOf(r.xuid)
			}
		}
	}
	return s
}

// worldChanged publishes what changed since before, a snapshot taken
// before the world was replaced or reset: presence events, and
// relationship events ({"NotificationType":"Added","Xuids":[...]}, and
// "Removed", "Changed" for a favorite set or cleared).
func (hub *rtaHub) worldChanged(before rtaSnapshot) {
	if hub == nil {
		return
	}
	for _, x := range slices.Sorted(maps.Keys(before.presence)) {
		hub.presenceChanged(x, before.presence[x], hub.w.presenceOf(x))
	}
	for _, x := range slices.Sorted(maps.Keys(before.relations)) {
		old, now := before.relations[x], hub.w.relationsOf(x)
		var added, removed, changed []string
		for y, fav := range now {
			if was, ok := old[y]; !ok {
				added = append(added, y)
			} else if was != fav {
				changed = append(changed, y)
			}
		}
		for y := range old {
			if _, ok := now[y]; !ok {
				removed = append(removed, y)
			}
		}
		key := rtaResource{kind: rtaFriends, xuid: x}.key()
		self := func(c string) bool { return c == x }
		for _, n := range []struct {
			kind  string
			xuids []string
		}{{"Added", added}, {"Removed", removed}, {"Changed", changed}} {
			if len(n.xuids) > 0 {
				slices.Sort(n.xuids)
				hub.publish(key, self, map[string]any{"NotificationType": n.kind, "Xuids": n.xuids})
			}
		}
	}
}

// sessionChanged taps the members of a session, before or after a write
// (doc), on their connections that subscribed to MPSD:
// {"shoulderTaps":[{"resource":"SCID~TEMPLATE~NAME","changeNumber":N,"branch":ID}]}.
func (hub *rtaHub) sessionChanged(ref []string, old, doc []byte) {
	if hub == nil || len(ref) != 3 {
		return
	}
	var s0, s1 session
	json.Unmarshal(old, &s0)
	if json.Unmarshal(doc, &s1) != nil {
		return
	}
	members := map[string]bool{}
	for _, s := range []*session{&s0, &s1} {
		for _, m := range s.Members {
			if sys, _ := m.Constants["system"].(map[string]any); sys != nil {
				if x, ok := sys["xuid"].(string); ok {
					members[x] = true
				}
			}
		}
	}
	tap := map[string]any{"shoulderTaps": []map[string]any{{
		"resource": strings.Join(ref, "~"), "changeNumber": s1.ChangeNumber, "branch": s1.CorrelationID}}}
	for _, x := range slices.Sorted(maps.Keys(members)) {
		hub.publish(rtaResource{kind: rtaSessions, xuid: x}.key(), nil, tap)
	}
}
