package throttle_test

import (
	"context"
	"fmt"
	"time"

	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/throttle"
)

func ExampleMemoryServerStore() {
	var s throttle.MemoryServerStore
	profile, _ := limits.Default().Match("GET", "profile.xboxlive.com", "/users/me/profile/settings")
	k := throttle.Key{User: "2533274791234567", Title: "1234567890", Scope: profile.Scope()}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var d throttle.Decision
	for i := 0; i < 11; i++ {
		d, _ = s.Take(context.Background(), k, profile.Limit(), now.Add(time.Duration(i)*time.Second))
	}
	fmt.Println(d.Allowed, d.Limiter, d.RetryAfter, d.Burst.Count)
	// Output:
	// false burst 5s 11
}

func ExampleMemoryBudgetStore() {
	var b throttle.MemoryBudgetStore
	k := throttle.Key{User: "u", Title: "t", Scope: "profile"}
	l := throttle.Limit{Burst: 10, Sustain: 30}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 10; i++ {
		b.Reserve(context.Background(), k, l, now, 0)
	}
	a, _ := b.Reserve(context.Background(), k, l, now.Add(3*time.Second), 0)
	fmt.Println(a.Allowed, a.Wait) // 15 s plus the default 1 s margin, from 3 s in
	// Output: false 13s
}
