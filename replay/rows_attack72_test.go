package replay

import (
	"context"
	"testing"
	"time"

	"github.com/xblgo/fgrl/limits"
)

const attack72User = "2533274791234567"

// replay.Row said `Start int `json:"start"` // seconds from the first call`,
// but rows are counted from the pattern's time 0, as its events' At are
// (helper 186: a lone call at 30 s came after an idle row 0-30). The doc
// now says so: the rows start at 0 and the call's row at 30.
func TestAttack72RowStartFromPatternTimeZero(t *testing.T) {
	p := Pattern{{At: 30 * time.Second, Service: "profile", User: attack72User, Count: 3}}
	res, err := Run(context.Background(), p, Options{Limits: limits.Default(), Client: "naive"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 2 || res.Rows[0].Start != 0 || res.Rows[0].Requests != 0 || res.Rows[1].Start != 30 || res.Rows[1].Requests != 3 {
		t.Errorf("rows %+v; want an idle row from 0, then the call's row from 30 s (the pattern's time)", res.Rows)
	}
}

// held: README.md: "Xbox services count each user + title pair's
// requests per service over a 15 s burst window and a 300 s sustain
// window and answer 429 when either is full"; "Refused requests still
// count". Counted by hand for profile (10 / 15 s, 30 / 300 s), windows
// starting at the first request: 30 calls at 0 (10 served, 20 throttled:
// burst), one at 299.999 s (the sustain window [0, 300) holds 30: 429,
// sustain), one at 300 s (a new sustain window; the burst window opened
// at 299.999 holds 2: served).
func TestAttack72HandCountedWindowEdges(t *testing.T) {
	p := Pattern{
		{At: 0, Service: "profile", User: attack72User, Count: 30},
		{At: 299999 * time.Millisecond, Service: "profile", User: attack72User, Count: 1},
		{At: 300 * time.Second, Service: "profile", User: attack72User, Count: 1},
	}
	res, err := Run(context.Background(), p, Options{Limits: limits.Default(), Client: "naive"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Served != 11 || res.Server429s != 21 || res.Sent != 32 {
		t.Errorf("served %d, 429s %d, sent %d; want 11, 21, 32", res.Served, res.Server429s, res.Sent)
	}
	want := []Row{
		{Start: 0, End: 15, Requests: 30, BurstCount: 30, SustainCount: 30, Throttled: 20, Limit: "burst"},
		{Start: 15, End: 285, SustainCount: 30, Limit: "-"},
		{Start: 285, End: 300, Requests: 1, BurstCount: 1, SustainCount: 31, Throttled: 1, Limit: "sustain"},
		{Start: 300, End: 315, Requests: 1, BurstCount: 2, SustainCount: 1, Limit: "-"},
	}
	if len(res.Rows) != len(want) {
		t.Fatalf("rows %+v; want %+v", res.Rows, want)
	}
	for i := range want {
		if res.Rows[i] != want[i] {
			t.Errorf("row %d: %+v; want %+v", i, res.Rows[i], want[i])
		}
	}
}

// held: replay.Run: "When ctx ends, the calls not yet started are not
// made and Run returns ctx's error with what the run counted until then."
// A pattern at the bounds (2,000,000 calls of 100,000 users over a week)
// cancelled after 200 ms of real time ends within seconds.
func TestAttack72RunEndsWithContextOnLargePattern(t *testing.T) {
	p := make(Pattern, 0, MaxEvents)
	for i := range MaxEvents {
		p = append(p, Event{At: time.Duration(i) * (MaxSpan / MaxEvents), Service: "profile",
			User: "2533274790" + itoa6(i), Count: MaxCalls / MaxEvents}) // distinct XUIDs
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	res, err := Run(ctx, p, Options{Limits: limits.Default(), Client: "fgrl"})
	if err == nil {
		t.Fatalf("a cancelled run returned no error (calls %d)", res.Calls)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("a run cancelled after 200 ms took %v to end", took)
	}
	if res.Calls >= MaxCalls {
		t.Errorf("a run cut short counts %d calls: want those it made", res.Calls)
	}
}

func itoa6(i int) string {
	b := []byte("000000")
	for j := 5; j >= 0; j-- {
		b[j] = byte('0' + i%10)
		i /= 10
	}
	return string(b)
}
