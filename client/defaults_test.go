package client

import (
	"context"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/analyze"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/transport"
)

// TestDefaultsPassTheAnalyzer: a plain loop of lookups (GetProfile and
// GetPresence for one user after another, each awaited) with the default
// Config (its transport, as New makes it, over the mock, recorded under
// it) earns no finding from the project's own trace analyzer that the
// client's shape of the calls decides: a lookup alone is the single-user
// call, never a batch call listing one user. Paced at one user every
// 2.5 s the trace is green; as fast as answered only the loop's own pace
// warns (bursts: GetProfiles is the cure). Before, each GetProfile was a
// batch call listing one user: a small-batch warning for the lookups and a
// batch-frequency one per run of them, paced or not.
func TestDefaultsPassTheAnalyzer(t *testing.T) {
	for _, tc := range []struct {
		name  string
		pace  time.Duration
		green bool
	}{
		{"one user every 2.5 s", 2500 * time.Millisecond, true},
		{"as fast as answered", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rec := &analyze.Recorder{Base: mock.NewHandler()}
				c, err := New(Config{TitleID: title, Tokens: mockTokens(), Transport: &transport.Transport{TitleID: title, Base: rec}})
				if err != nil {
					t.Fatal(err)
				}
				ctx := context.Background()
				for i := range 25 { // within profile's 30 calls in 300 s: the transport refuses none
					xuid := strconv.Itoa(2533274790000000 + i)
					if _, err := c.As(me).GetProfile(ctx, xuid, []string{"Gamertag"}); err != nil {
						t.Fatalf("GetProfile %s: %v", xuid, err)
					}
					if _, err := c.As(me).GetPresence(ctx, xuid); err != nil {
						t.Fatalf("GetPresence %s: %v", xuid, err)
					}
					time.Sleep(tc.pace)
				}
				rep, err := analyze.Analyze(rec.Calls(), nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				shaped := rep.ByRule[analyze.RuleSmallBatch] + rep.ByRule[analyze.RuleBatchFrequency]
				if shaped != 0 || tc.green && rep.Verdict != analyze.Green || rep.Verdict == analyze.Red {
					t.Errorf("verdict %s, findings by rule %v; want no batch finding, and green=%v", rep.Verdict, rep.ByRule, tc.green)
				}
			})
		})
	}
}
