package client

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
)

// TestAttackSubscribeDuplicatesCountOnce: Subscribe "subscribes to rs (1 to
// 1100 resources; the same one twice counts once)". 1,100 distinct
// resources with one of them named twice are 1,100 resources as the
// promise counts them; Subscribe refuses the call because it counts
// before it removes the duplicate.
func TestAttackSubscribeDuplicatesCountOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := scriptedRTA(t)
		rs := make([]Resource, 0, 1101)
		for i := range 1100 {
			rs = append(rs, PresenceOf(fmt.Sprintf("25332747900%05d", i)))
		}
		rs = append(rs, rs[0])
		ctx, cancel := context.WithCancel(t.Context())
		ch, err := c.As(me).Subscribe(ctx, rs...)
		if err != nil {
			t.Errorf("Subscribe of 1,100 resources, one named twice: %v", err)
		}
		cancel()
		if ch != nil {
			for range ch {
			}
		}
	})
}
