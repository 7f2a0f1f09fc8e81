package mock

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/xblgo/fgrl/throttle"
)

// TestOverviewBounded: keys with huge names (the journal cuts a real
// call's to 64 bytes; these are put in it whole) fill no more than
// maxOverviewBytes of an overview; the rest are counted, not listed.
func TestOverviewBounded(t *testing.T) {
	h := NewHandler()
	now := time.Now()
	rule, _ := h.cfg.limits.ByScope("profile")
	for i := range 100 {
		k := throttle.Key{User: strings.Repeat("u", 16<<10) + string(rune('a'+i%26)) + string(rune('a'+i/26)), Title: title1, Scope: "profile"}
		h.cfg.store.Take(context.Background(), k, rule.Limit(), now)
		h.journal.keep(Call{Time: now, userhash: k.User, Title: k.Title, Scope: k.Scope, flags: counted | decided})
	}
	s := h.Overview(context.Background())
	if len(s.Keys) != 15 || s.MoreKeys != 85 {
		t.Errorf("%d keys listed, %d more; want 15 (256 KiB of 16 KiB names) and 85", len(s.Keys), s.MoreKeys)
	}
}

// TestOverviewReadsTheJournal: the live page's keys and recent 429s are
// the journal's calls: the keys they were counted against, the latest
// first, and FGRL's 429s (not a service fault's); when the journal forgets
// its calls, they go with them, and ResetCounts stops listing a key until
// it is counted again. Before, they were kept apart from the record of
// calls, up to 10,000 keys and 4 MiB besides its 32 MiB: forgetting the
// calls left them listed.
func TestOverviewReadsTheJournal(t *testing.T) {
	h := Must(New(Config{Faults: Faults{Services: []ServiceFault{{Service: "presence", Status: 429}}}}))
	ctx := context.Background()
	for range 11 {
		do(t, h, "GET", profileURL, Token(xuid1, title1), "") // the 11th: 429
	}
	do(t, h, "GET", profileURL, Token(xuid2, title1), "")
	do(t, h, "GET", presenceURL, Token(xuid1, title1), "") // counted, then a service fault's 429
	o := h.Overview(ctx)
	type key struct{ User, Scope string }
	var keys []key
	for _, k := range o.Keys {
		keys = append(keys, key{k.User, k.Scope})
	}
	if diff := cmp.Diff([]key{{UserHash(xuid1), "presence/read"}, {UserHash(xuid2), "profile"}, {UserHash(xuid1), "profile"}}, keys); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
	if len(o.Throttled) != 1 || o.Throttled[0].User != UserHash(xuid1) || o.Throttled[0].Limit != "burst" ||
		o.Throttled[0].RetryAfter <= 0 {
		t.Errorf("recent 429s: %+v, want the one FGRL answered", o.Throttled)
	}
	if err := h.ResetCounts(ctx, &throttle.Key{User: UserHash(xuid2), Title: title1, Scope: "profile"}); err != nil {
		t.Fatal(err)
	}
	if o := h.Overview(ctx); len(o.Keys) != 2 || o.Keys[1].User != UserHash(xuid1) || len(o.Throttled) != 1 {
		t.Errorf("after resetting xuid2's key: %+v, %+v", o.Keys, o.Throttled)
	}
	do(t, h, "GET", profileURL, Token(xuid2, title1), "")
	if o := h.Overview(ctx); len(o.Keys) != 3 || o.Keys[0].User != UserHash(xuid2) || o.Keys[0].Burst.Count != 1 {
		t.Errorf("xuid2 counted again: %+v", o.Keys)
	}
	h.ForgetCalls()
	if o := h.Overview(ctx); len(o.Keys) != 0 || len(o.Throttled) != 0 || o.Scopes["profile"].Requests != 13 {
		t.Errorf("after ForgetCalls: %d keys, %d recent 429s, %+v; want none, and the counters kept", len(o.Keys), len(o.Throttled), o.Scopes)
	}
}

// TestResetCounts: ResetCounts forgets one key's counts, or all; a store
// that cannot forget is ErrCannotReset.
func TestResetCounts(t *testing.T) {
	ctx := context.Background()
	h := NewHandler()
	for _, x := range []string{xuid1, xuid2} {
		for range 3 {
			do(t, h, "GET", profileURL, Token(x, title1), "")
		}
	}
	burst := func(x string) int {
		d, err := h.Counts(throttle.Key{User: UserHash(x), Title: title1, Scope: "profile"})
		if err != nil {
			t.Fatal(err)
		}
		return d.Burst.Count
	}
	if err := h.ResetCounts(ctx, &throttle.Key{User: UserHash(xuid1), Title: title1, Scope: "profile"}); err != nil || burst(xuid1) != 0 || burst(xuid2) != 3 {
		t.Errorf("one key: %v; bursts %d and %d, want 0 and 3", err, burst(xuid1), burst(xuid2))
	}
	if err := h.ResetCounts(ctx, nil); err != nil || burst(xuid2) != 0 {
		t.Errorf("every key: %v; burst %d, want 0", err, burst(xuid2))
	}
	h = Must(New(Config{Store: struct{ throttle.ServerStore }{&throttle.MemoryServerStore{}}})) // no throttle.Resetter
	if err := h.ResetCounts(ctx, nil); err != ErrCannotReset {
		t.Errorf("a store that cannot forget: %v, want ErrCannotReset", err)
	}
}

// TestCountsFallback: Counts reads the key of a host the limits have no
// rule for, which Config.Fallback counts. Before, it refused the fallback
// rule's scope, which the mock counts such calls under.
func TestCountsFallback(t *testing.T) {
	h := Must(New(Config{Fallback: true}))
	do(t, h, "GET", "https://nosuch.xboxlive.com/x", Token(xuid1, title1), "")
	scope := h.cfg.limits.Fallback.Scope()
	d, err := h.Counts(throttle.Key{User: UserHash(xuid1), Title: title1, Scope: scope})
	if err != nil || d.Burst.Count != 1 {
		t.Errorf("Counts(%s): %+v, %v; want a burst of 1", scope, d.Counts, err)
	}
	if o := h.Overview(context.Background()); len(o.Keys) != 1 || o.Keys[0].Scope != scope || o.Keys[0].Burst.Count != 1 {
		t.Errorf("overview: %+v", o.Keys)
	}
}

// TestMetrics: the counters that /metrics (package mockprom) exports:
// requests, 429s and 503s per scope, keys, store keys and errors.
func TestMetrics(t *testing.T) {
	h := NewHandler()
	srv := serveAll(t, h)
	for range 12 {
		getProfile(t, srv)
	}
	h.SetFaults(Faults{ErrorRate: 1, Seed: 2})
	getProfile(t, srv) // still a 429: faults apply to admitted requests
	want := Metrics{Scopes: map[string]ScopeCounts{"profile": {Requests: 13, Throttled: 3}}, Keys: 1, StoreKeys: 1,
		FaultSwitches: 1, FaultsActive: map[string]int{}, FaultsInjected: map[[2]string]int64{}}
	if diff := cmp.Diff(want, h.Metrics()); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
}
