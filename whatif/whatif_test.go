package whatif_test

import (
	"context"
	"encoding/json"
	"math"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/xblgo/fgrl/analyze"
	"github.com/xblgo/fgrl/whatif"
)

var t0 = time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)

// ignored429s is a trace written for this test: a title reads one user's
// presence 40 times in 8 s, the service answers the last 10 with 429 and
// Retry-After 15, and the title goes on calling; it also reads a profile
// once and calls a CDN.
func ignored429s() []analyze.Call {
	var calls []analyze.Call
	for i := range 40 {
		c := analyze.Call{Index: len(calls), Time: t0.Add(time.Duration(i) * 200 * time.Millisecond), Method: "GET",
			URL: "https://userpresence.xboxlive.com/users/xuid(2533274791234567)", Authorization: "XBL3.0 x=111;REDACTED", Status: 200}
		if i >= 30 {
			c.Status, c.RetryAfter = 429, "15"
		}
		calls = append(calls, c)
	}
	calls = append(calls,
		analyze.Call{Index: len(calls), Time: t0.Add(9 * time.Second), Method: "POST", URL: "https://profile.xboxlive.com/users/batch/profile/settings",
			Authorization: "XBL3.0 x=111;REDACTED", Status: 200, RequestBody: []byte(`{"userIds":["1","2"],"settings":["Gamertag"]}`)},
		analyze.Call{Index: len(calls) + 1, Time: t0.Add(9 * time.Second), Method: "GET", URL: "https://assets.example.com/a.png", Status: 200})
	return calls
}

// replay runs the what-if of ignored429s.
func replay(t *testing.T) *whatif.Result {
	t.Helper()
	r, err := whatif.New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	calls := ignored429s()
	for i := range calls {
		r.Add(&calls[i])
	}
	r.AddInput(analyze.Input{Name: "ignored429s.har", Calls: len(calls)})
	res, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestIgnored429s: through fgrl the trace's 10 429s become none: the
// transport holds the 13 calls past 90 % of the burst (by up to about 10 s)
// instead, and the verdict goes from red to not red; the profile read and
// the CDN call change nothing. A second replay gives the same figures.
func TestIgnored429s(t *testing.T) {
	res := replay(t)
	if again := replay(t); !cmp.Equal(res.Services, again.Services) || again.After.Verdict != res.After.Verdict {
		t.Errorf("two replays differ:\n%+v\n%+v", res.Services, again.Services)
	}
	if res.Before.Verdict != analyze.Red || res.After.Verdict == analyze.Red || res.After.ByRule[analyze.RuleThrottledCalls] != 0 {
		t.Errorf("verdict %s before, %s after (%v); want red, then no 429 finding", res.Before.Verdict, res.After.Verdict, res.After.ByRule)
	}
	got := res.Services
	for i := range got { // the delays' exact figures are the transport's; their bounds are checked here
		if got[i].MaxMs > 12000 || (got[i].Delayed > 0) != (got[i].MaxMs > 0) {
			t.Errorf("%s: delays %+v", got[i].Service, got[i])
		}
		got[i].P50Ms, got[i].P99Ms, got[i].MaxMs = 0, 0, 0
	}
	want := []whatif.Service{
		{Service: "presence/read", Calls: 40, Trace429s: 10, Fgrl429s: 0, Delayed: 13}, // past 27 of the 30 a burst allows (LimitShare 0.9)
		{Service: "profile", Calls: 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("services (-want +got):\n%s", diff)
	}
	if res.Calls != 41 {
		t.Errorf("replayed %d calls, want 41 (the CDN call is not judged)", res.Calls)
	}
}

// TestEmpty: a trace with no call to replay is an error, not an empty
// what-if.
func TestEmpty(t *testing.T) {
	r, _ := whatif.New(nil, nil)
	r.Add(&analyze.Call{Time: t0, Method: "GET", URL: "https://assets.example.com/a.png", Status: 200})
	if _, err := r.Run(context.Background()); err == nil {
		t.Error("a trace of no judged call replayed")
	}
}

// TestTurnsGreen: a title looks one player's profile up every 1.4 s for
// ten minutes, past profile's 30 calls in 300 s: the service answers 429
// once a window's 30 are spent and the title goes on calling (red). Through
// fgrl the calls past 27 a window wait or are refused locally, the service
// answers no 429, and the analyzer finds nothing: green.
func TestTurnsGreen(t *testing.T) {
	r, _ := whatif.New(nil, nil)
	window, inWindow := 0, 0
	for i := range 430 {
		at := time.Duration(i) * 1400 * time.Millisecond
		if w := int(at / (300 * time.Second)); w != window {
			window, inWindow = w, 0
		}
		inWindow++
		c := analyze.Call{Index: i, Time: t0.Add(at), Method: "GET", Status: 200, Authorization: "XBL3.0 x=111;REDACTED",
			URL: "https://profile.xboxlive.com/users/xuid(" + strconv.Itoa(2533274790000000+i) + ")/profile/settings?settings=Gamertag"}
		if inWindow > 30 {
			c.Status, c.RetryAfter = 429, "10"
		}
		r.Add(&c)
	}
	res, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Before.Verdict != analyze.Red || res.After.Verdict != analyze.Green || res.Services[0].Fgrl429s != 0 || res.Services[0].Trace429s == 0 {
		t.Errorf("verdict %s (%v) then %s (%v); services %+v; want red, then green with no 429",
			res.Before.Verdict, res.Before.ByRule, res.After.Verdict, res.After.ByRule, res.Services)
	}
}

// TestSpanBounded: calls centuries apart (a trace the analyzer reads) are
// no replay: a clear error, not an overflow.
func TestSpanBounded(t *testing.T) {
	r, _ := whatif.New(nil, nil)
	for _, at := range []time.Time{time.Date(1823, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2117, 3, 1, 0, 0, 0, 0, time.UTC)} {
		r.Add(&analyze.Call{Time: at, Method: "GET", URL: "https://profile.xboxlive.com/users/me/profile/settings", Authorization: "XBL3.0 x=1;REDACTED", Status: 200})
	}
	if _, err := r.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "span more than") {
		t.Errorf("a replay of 294 years: %v", err)
	}
}

// TestOrderOfAddingChangesNothing: calls added out of time order (traces
// added one after another, a trace not in order) replay as the same calls
// in order do.
func TestOrderOfAddingChangesNothing(t *testing.T) {
	run := func(reverse bool) string {
		r, _ := whatif.New(nil, nil)
		calls := ignored429s()
		for i := range calls {
			if reverse {
				i = len(calls) - 1 - i
			}
			r.Add(&calls[i])
		}
		res, err := r.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		res.Before, res.After.Inputs = nil, nil // the trace as read: its order is its own
		b, _ := json.Marshal(res)
		return string(b)
	}
	if in, back := run(false), run(true); in != back {
		t.Errorf("added backwards, the replay differs:\n%s", cmp.Diff(in, back))
	}
}

// TestLimitMemory: a what-if sets MemoryLimit when nothing set a limit
// before it, restores the limit after, and leaves a GOMEMLIMIT alone.
func TestLimitMemory(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	before := debug.SetMemoryLimit(math.MaxInt64)
	defer debug.SetMemoryLimit(before)
	restore := whatif.LimitMemory()
	if got := debug.SetMemoryLimit(-1); got != whatif.MemoryLimit {
		t.Errorf("limit %d during the what-if; want %d", got, whatif.MemoryLimit)
	}
	restore()
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("limit %d after the what-if; want none again", got)
	}
	debug.SetMemoryLimit(1 << 30) // a program's own limit stays
	whatif.LimitMemory()()
	if got := debug.SetMemoryLimit(-1); got != 1<<30 {
		t.Errorf("limit %d; want the program's own 1 GiB", got)
	}
	debug.SetMemoryLimit(math.MaxInt64)
	t.Setenv("GOMEMLIMIT", "off") // the user's choice: no limit
	defer whatif.LimitMemory()()
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("limit %d under GOMEMLIMIT=off; want none", got)
	}
}
