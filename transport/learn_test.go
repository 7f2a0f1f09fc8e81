package transport_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/throttle"
	"github.com/xblgo/fgrl/transport"
)

// servedProfile is a service applying profile 6 / 30 where the built-in
// table says 10 / 30.
func servedProfile(t *testing.T, burst int) *mock.Handler {
	t.Helper()
	served, err := limits.Read(strings.NewReader(`{"rules": [{"service": "profile", "hosts": ["profile.xboxlive.com"], "burst": ` + strconv.Itoa(burst) + `, "sustain": 30}]}`))
	if err != nil {
		t.Fatal(err)
	}
	h, err := mock.New(mock.Config{Limits: served})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// profileAs is one profile read of user xuid through c.
func profileAs(ctx context.Context, c *http.Client, xuid string) {
	req, _ := http.NewRequestWithContext(ctx, "GET", policyURL, nil)
	req.Header.Set("Authorization", mock.Token(xuid, "1234567890"))
	if resp, err := c.Do(req); err == nil {
		resp.Body.Close()
	}
}

// ignoreUntil leaves out when a learned limit ends, which the timelines
// check apart.
var ignoreUntil = cmpopts.IgnoreFields(transport.LearnedLimit{}, "Until")

// TestLearnedLimits: the service applies profile 6 / 30 where the table
// says 10 / 30 (or has no rule for the host); one user's first 429 body
// (maxRequests 6 in 15 s) becomes that user's burst, and 30 calls then
// collect that one 429. Without learning every burst of 10 collects one;
// the ceiling caps what is learned above the table, and only that.
func TestLearnedLimits(t *testing.T) {
	noProfile, err := limits.Read(strings.NewReader(`{"rules": [{"service": "social", "hosts": ["social.xboxlive.com"], "burst": 10, "sustain": 30}]}`))
	if err != nil {
		t.Fatal(err)
	}
	uhs := mock.UserHash("2533274790000001")
	for _, tc := range []struct {
		name     string
		served   int // the service's burst
		limits   *limits.Limits
		ceiling  int
		want429s int64
		learned  []transport.LearnedLimit
	}{
		{"table differs", 6, nil, 0, 1, []transport.LearnedLimit{{Scope: "profile", User: uhs, Period: throttle.Burst, Table: 10, Learned: 6}}},
		{"host not in the table", 6, noProfile, 0, 1, []transport.LearnedLimit{{Scope: "host:profile.xboxlive.com", User: uhs, Period: throttle.Burst, Learned: 6}}},
		{"ceiling", 6, noProfile, 5, 1, []transport.LearnedLimit{{Scope: "host:profile.xboxlive.com", User: uhs, Period: throttle.Burst, Learned: 5}}},
		{"a ceiling below the table lowers nothing", 6, nil, 5, 1, []transport.LearnedLimit{{Scope: "profile", User: uhs, Period: throttle.Burst, Table: 10, Learned: 6}}},
		{"learning off", 6, nil, -1, 4, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := servedProfile(t, tc.served)
				tr := &transport.Transport{Base: h, TitleID: "1234567890", Limits: tc.limits, MaxLearnedLimit: tc.ceiling}
				c := &http.Client{Transport: tr}
				ctx := transport.WithPolicy(context.Background(), transport.Policy{MaxWait: 5 * time.Minute})
				for range 30 { // a 429 15 s long is not retried in XSAPI's 20 s window: the call ends in it
					profileCall(ctx, c)
				}
				st := tr.Stats()
				if st.Server429s != tc.want429s {
					t.Errorf("%d 429s, want %d", st.Server429s, tc.want429s)
				}
				if diff := cmp.Diff(tc.learned, tr.LearnedLimits(), ignoreUntil); diff != "" {
					t.Errorf("LearnedLimits (-want +got):\n%s", diff)
				}
				if st.LimitsLearned != int64(len(tc.learned)) {
					t.Errorf("Stats.LimitsLearned %d, want %d", st.LimitsLearned, len(tc.learned))
				}
			})
		})
	}
}

// TestLearnedFloor: a service whose 429 body reports far less than the
// table (2 where it says 100) lowers the limit to a tenth of the table's,
// never below.
func TestLearnedFloor(t *testing.T) {
	table, _ := limits.Read(strings.NewReader(`{"rules": [{"service": "profile", "hosts": ["profile.xboxlive.com"], "burst": 100, "sustain": 300}]}`))
	synctest.Test(t, func(t *testing.T) {
		tr := &transport.Transport{Base: servedProfile(t, 2), TitleID: "1234567890", Limits: table, RetryWindow: -1}
		for range 3 {
			profileAs(context.Background(), &http.Client{Transport: tr}, "2533274790000001")
		}
		if got := tr.LearnedLimits(); len(got) != 1 || got[0].Learned != 10 {
			t.Errorf("LearnedLimits %+v, want one of 10: a tenth of the table's 100", got)
		}
	})
}

// TestLearnedConfirmed: one user's 429 body lowers the limit of that user
// alone; the same report from another user confirms it for every user of
// the scope; with no confirming 429 for two sustain windows it ends, and
// the table's limit is back. Each change is an event carrying the body
// that caused it (an end, none).
func TestLearnedConfirmed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var events []transport.Event
		tr := &transport.Transport{Base: servedProfile(t, 6), TitleID: "1234567890", RetryWindow: -1,
			Observe: func(_ context.Context, e transport.Event) {
				if e.Kind == transport.EventLimitLearned {
					mu.Lock()
					events = append(events, e)
					mu.Unlock()
				}
			}}
		c := &http.Client{Transport: tr}
		burst := func(xuid string) (int64, int64) { // 8 calls at once: 429s and local refusals
			before := tr.Stats()
			for range 8 {
				profileAs(context.Background(), c, xuid)
			}
			after := tr.Stats()
			return after.Server429s - before.Server429s, after.LocalRefusals - before.LocalRefusals
		}
		type outcome struct{ Server429s, Refusals int64 }
		var got []outcome
		step := func(xuid string) {
			s, r := burst(xuid)
			got = append(got, outcome{s, r})
		}
		step("2533274790000001") // a's 7th call: 429, learned for a; the 8th refused locally
		step("2533274790000002") // b counts against the table's 10: its 7th gets the 429, which confirms 6
		step("2533274790000003") // c: 6 served, 2 refused, no 429
		time.Sleep(throttle.LearnedFor)
		step("2533274790000003") // the limit ended: c counts against 10 again and collects a 429
		want := []outcome{{1, 1}, {1, 1}, {0, 2}, {1, 1}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("each user's burst of 8 (-want +got):\n%s", diff)
		}
		var reasons []string
		for _, e := range events {
			reasons = append(reasons, e.Reason)
			if carries := e.Body != nil && e.Body.MaxRequests == 6; carries == strings.Contains(e.Reason, "expired") {
				t.Errorf("event %q: body %+v", e.Reason, e.Body)
			}
		}
		wantReasons := []string{
			"burst 6 in 15 s for this user until another confirms it (the limits data's 10)",
			"burst 6 in 15 s for every user of the scope (confirmed) (the limits data's 10)",
			"burst 6 expired for the scope: the limits data's 10",
			"burst 6 in 15 s for this user until another confirms it (the limits data's 10)",
		}
		if diff := cmp.Diff(wantReasons, reasons); diff != "" {
			t.Errorf("limit events (-want +got):\n%s", diff)
		}
	})
}

// TestLearnedShared: a limit confirmed through one transport's store is
// used by every transport on the store from its next read of it: a third
// user of a third transport sends no call into the 429; a limit one user
// alone reported stays that transport's and that user's.
func TestLearnedShared(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := servedProfile(t, 6)
		store := &throttle.MemoryBudgetStore{}
		a := &transport.Transport{Base: h, TitleID: "1234567890", Budget: store, RetryWindow: -1}
		b := &transport.Transport{Base: h, TitleID: "1234567890", Budget: store, RetryWindow: -1}
		for range 8 {
			profileAs(context.Background(), &http.Client{Transport: a}, "2533274790000001")
		}
		c := &transport.Transport{Base: h, TitleID: "1234567890", Budget: store, RetryWindow: -1}
		for range 8 {
			profileAs(context.Background(), &http.Client{Transport: c}, "2533274790000003")
		}
		if n := c.Stats().Server429s; n != 1 {
			t.Errorf("before confirmation, a third transport got %d 429s, want 1: one user's report is not the scope's", n)
		}
		for range 8 {
			profileAs(context.Background(), &http.Client{Transport: b}, "2533274790000002")
		}
		time.Sleep(time.Minute) // every window frees its calls; c reads the store again
		for range 8 {
			profileAs(context.Background(), &http.Client{Transport: c}, "2533274790000004")
		}
		if n := c.Stats().Server429s; n != 1 {
			t.Errorf("after confirmation, the third transport got %d 429s in all, want still 1", n)
		}
		want := []transport.LearnedLimit{{Scope: "profile", Period: throttle.Burst, Table: 10, Learned: 6}}
		if diff := cmp.Diff(want, c.LearnedLimits(), ignoreUntil); diff != "" {
			t.Errorf("the third transport's LearnedLimits (-want +got):\n%s", diff)
		}
	})
}
