package mock

import (
	"cmp"
	"slices"
)

// The hub's index of subscriptions by resource: what a change of one
// costs is its own subscribers (publish), whatever else is open.

// rtaFollowers is one resource's subscriptions.
type rtaFollowers struct {
	res  rtaResource
	subs map[rtaSubRef]struct{}
}

// rtaSubRef is one subscription of one connection.
type rtaSubRef struct {
	c   *rtaConn
	sub uint32
}

// follow adds subscription sub of c to res, unless c holds maxRTASubs
// already or all connections maxSubs; it reports whether it did.
func (hub *rtaHub) follow(c *rtaConn, res rtaResource) (sub uint32, ok bool) {
	hub.mu.Lock()
	defer hub.mu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.subs) >= maxRTASubs || hub.nsubs >= hub.maxSubs {
		return 0, false
	}
	// The counter wraps after 2^32 subscriptions of the mock's life: an id
	// the connection still holds (at most maxRTASubs of them), or 0, is
	// passed over.
	for sub = hub.nextSub.Add(1); ; sub = hub.nextSub.Add(1) {
		if _, held := c.subs[sub]; sub != 0 && !held {
			break
		}
	}
	hub.nsubs++
	c.subs[sub] = res
	f := hub.follows[res.key()]
	if f == nil {
		f = &rtaFollowers{res: res, subs: map[rtaSubRef]struct{}{}}
		hub.follows[res.key()] = f
	}
	f.subs[rtaSubRef{c, sub}] = struct{}{}
	return sub, true
}

// unfollow removes subscription sub of c; it reports whether c held it.
func (hub *rtaHub) unfollow(c *rtaConn, sub uint32) bool {
	hub.mu.Lock()
	defer hub.mu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	return hub.unfollowLocked(c, sub)
}

// unfollowLocked is unfollow, under both locks.
func (hub *rtaHub) unfollowLocked(c *rtaConn, sub uint32) bool {
	res, ok := c.subs[sub]
	if !ok {
		return false
	}
	delete(c.subs, sub)
	// Its held-back events go with it: the id may come round to another
	// subscription of c before they are due (the counter wraps).
	c.delayed = slices.DeleteFunc(c.delayed, func(e delayedEvent) bool {
		if e.sub != sub {
			return false
		}
		c.release(len(e.b))
		return true
	})
	hub.nsubs--
	key := res.key()
	if f := hub.follows[key]; f != nil {
		delete(f.subs, rtaSubRef{c, sub})
		if len(f.subs) == 0 {
			delete(hub.follows, key)
		}
	}
	return true
}

// publish sends data as an event to every subscription of the resource
// key whose connection's user may see it (to, nil for any), after the
// delay of the rta fault in force.
func (hub *rtaHub) publish(key string, to func(xuid string) bool, data any) {
	if hub == nil {
		return
	}
	fault := hub.faults()
	hub.mu.Lock()
	defer hub.mu.Unlock()
	f := hub.follows[key]
	if f == nil {
		return
	}
	refs := make([]rtaSubRef, 0, len(f.subs))
	may := map[string]bool{} // to's verdict for each user, asked once
	for r := range f.subs {
		x := r.c.id.xuid
		ok, asked := may[x]
		if !asked {
			ok = to == nil || to(x)
			may[x] = ok
		}
		if ok {
			refs = append(refs, r)
		}
	}
	slices.SortFunc(refs, func(a, b rtaSubRef) int { return cmp.Compare(a.sub, b.sub) })
	for _, r := range refs {
		r.c.event(r.sub, rtaEventMessage(r.sub, data), fault.delay)
	}
}
