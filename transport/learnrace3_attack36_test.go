package transport

import (
	"sync"
	"testing"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// held: applyRead (reads numbered out of order, some stand-ins) racing
// setScope and setKey from 8 goroutines each, under -race: no race, no
// panic; a read numbered below one applied changes nothing; after the last
// read (the store's 6) every key limit of the window left is stricter than 6.
func TestAttack36ApplyReadRacesSetters(t *testing.T) {
	tr := &Transport{TitleID: title, Budget: &throttle.MemoryBudgetStore{}}
	tr.init()
	now := time.Now()
	until := now.Add(time.Minute)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(3)
		go func() {
			defer wg.Done()
			for i := range 200 {
				seq := tr.learned.reads.Add(1)
				before := tr.scopeMap()
				in := []throttle.Learned{{Scope: "profile", Period: throttle.Burst, Limit: 5 + (i+g)%4, Until: until}}
				tr.applyRead(seq, before, in, i%7 == 0, now)
			}
		}()
		go func() {
			defer wg.Done()
			for i := range 200 {
				tr.setScope("profile", throttle.Burst, throttle.Learned{Scope: "profile", Period: throttle.Burst, Limit: 4 + i%5, Until: until}, i%2 == 0, now)
			}
		}()
		go func() {
			defer wg.Done()
			for i := range 200 {
				k := throttle.Key{Scope: "profile", User: "2533274790000" + attack36Itoa(100+g*10+i%10)}
				tr.setKey(keyWindow{k, throttle.Burst}, throttle.Learned{Scope: "profile", Period: throttle.Burst, Limit: 3 + i%6, Until: until}, now)
			}
		}()
	}
	wg.Wait()
	if n := len(tr.learned.keys); n > 80 {
		t.Errorf("%d key limits for 80 keys", n)
	}
	// A stale read changes nothing.
	snap := tr.learned.scopes.Load()
	tr.applyRead(1, tr.scopeMap(), nil, false, now)
	if tr.learned.scopes.Load() != snap {
		t.Errorf("a read numbered 1, after %d reads applied, replaced the scopes", tr.learned.applied)
	}
	seq := tr.learned.reads.Add(1)
	tr.applyRead(seq, tr.scopeMap(), []throttle.Learned{{Scope: "profile", Period: throttle.Burst, Limit: 6, Until: until}}, false, now)
	if got := tr.scopeMap()[scopeWindow{"profile", throttle.Burst}]; got.Limit != 6 {
		t.Errorf("the last read's 6 is not in force: %+v", got)
	}
	for k, l := range tr.learned.keys {
		if l.Limit >= 6 {
			t.Errorf("key limit %+v of %d kept over the store's 6", k, l.Limit)
		}
	}
}
