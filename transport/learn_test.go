package transport_test

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/throttle"
	"github.com/xblgo/fgrl/transport"
)

// TestLearnedLimits: the service applies profile 6 / 30 where the table
// says 10 / 30 (or has no rule for the host); its first 429's body
// (maxRequests 6 in 15 s) becomes the scope's burst, and 30 calls then
// collect that one 429. Without learning every burst of 10 collects one;
// the ceiling caps what is learned.
func TestLearnedLimits(t *testing.T) {
	served, err := limits.Parse([]byte(`{"rules": [{"service": "profile", "hosts": ["profile.xboxlive.com"], "burst": 6, "sustain": 30}]}`))
	if err != nil {
		t.Fatal(err)
	}
	noProfile, err := limits.Parse([]byte(`{"rules": [{"service": "social", "hosts": ["social.xboxlive.com"], "burst": 10, "sustain": 30}]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		limits   *limits.Limits
		ceiling  int
		want429s int64
		learned  []transport.LearnedLimit
	}{
		{"table differs", nil, 0, 1, []transport.LearnedLimit{{Scope: "profile", Table: throttle.Limit{Burst: 10, Sustain: 30}, Learned: throttle.Limit{Burst: 6}}}},
		{"host not in the table", noProfile, 0, 1, []transport.LearnedLimit{{Scope: "host:profile.xboxlive.com", Learned: throttle.Limit{Burst: 6}}}},
		{"ceiling", nil, 5, 1, []transport.LearnedLimit{{Scope: "profile", Table: throttle.Limit{Burst: 10, Sustain: 30}, Learned: throttle.Limit{Burst: 5}}}},
		{"learning off", nil, -1, 4, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h, err := mock.New(mock.Config{Limits: served})
				if err != nil {
					t.Fatal(err)
				}
				tr := &transport.Transport{Base: h, TitleID: "1234567890", Limits: tc.limits, MaxLearnedLimit: tc.ceiling}
				c := &http.Client{Transport: tr}
				ctx := transport.WithMaxWait(context.Background(), 5*time.Minute)
				for range 30 { // a 429 15 s long is not retried in XSAPI's 20 s window: the call ends in it
					profileCall(ctx, c)
				}
				st := tr.Stats()
				if st.Server429s != tc.want429s {
					t.Errorf("%d 429s, want %d", st.Server429s, tc.want429s)
				}
				if diff := cmp.Diff(tc.learned, tr.LearnedLimits()); diff != "" {
					t.Errorf("LearnedLimits (-want +got):\n%s", diff)
				}
				if st.LimitsLearned != int64(len(tc.learned)) {
					t.Errorf("Stats.LimitsLearned %d, want %d", st.LimitsLearned, len(tc.learned))
				}
			})
		})
	}
}

// TestLearnedShared: what one transport learned, another on the same
// budget store uses from its next call: it sends no call into the 429.
func TestLearnedShared(t *testing.T) {
	served, _ := limits.Parse([]byte(`{"rules": [{"service": "profile", "hosts": ["profile.xboxlive.com"], "burst": 6, "sustain": 30}]}`))
	synctest.Test(t, func(t *testing.T) {
		h, _ := mock.New(mock.Config{Limits: served})
		store := &throttle.MemoryBudgetStore{}
		a := &transport.Transport{Base: h, TitleID: "1234567890", Budget: store}
		for range 7 { // the seventh gets the 429 and waits for its Retry-After
			profileCall(context.Background(), &http.Client{Transport: a})
		}
		time.Sleep(time.Minute) // every window frees its calls
		b := &transport.Transport{Base: h, TitleID: "1234567890", Budget: store}
		for range 8 {
			profileCall(transport.WithMaxWait(context.Background(), time.Minute), &http.Client{Transport: b})
		}
		if n := b.Stats().Server429s; n != 0 {
			t.Errorf("the second transport got %d 429s, want none: it learns from the store", n)
		}
		if got := b.LearnedLimits(); len(got) != 1 || got[0].Learned.Burst != 6 {
			t.Errorf("the second transport's LearnedLimits: %+v", got)
		}
	})
}
