package whatif

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/xblgo/fgrl/analyze"
)

// TestConcurrentCallsAnalysedInOneOrder: the calls of one instant, which
// the replay's concurrent calls may finish in either order, reach the
// analysis after in one order, numbered in it: the report is the same
// whichever order they came in (before, the analysis numbered them as they
// came, and a finding's evidence could name either call).
func TestConcurrentCallsAnalysedInOneOrder(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	call := func(at time.Duration, user, status int) *analyze.Call {
		return &analyze.Call{Time: t0.Add(at), Method: "GET", URL: "https://social.xboxlive.com/users/me/people",
			Authorization: "XBL3.0 x=" + string(rune('1'+user)) + ";REDACTED", Status: status}
	}
	var calls []*analyze.Call
	for i := range 40 { // two users polling at the same instants, one refused at times
		for u := range 2 {
			status := 200
			if i%7 == u {
				status = 429
			}
			calls = append(calls, call(time.Duration(i)*5*time.Second, u, status))
		}
	}
	report := func(order []*analyze.Call) string {
		t.Helper()
		a, err := analyze.New(nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		o := &inOrder{a: a}
		for _, c := range order {
			c := *c
			o.add(&c)
		}
		o.flush()
		b, err := json.Marshal(a.Report())
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	swapped := append([]*analyze.Call(nil), calls...)
	for i := 0; i+1 < len(swapped); i += 2 {
		swapped[i], swapped[i+1] = swapped[i+1], swapped[i]
	}
	if diff := cmp.Diff(report(calls), report(swapped)); diff != "" {
		t.Errorf("the report depends on the order of one instant's calls (-in order +swapped):\n%s", diff)
	}
}

// TestEventsInChunks: the replay reads the calls across chunks as they
// were added, or in time order once sorted, and Release lets go of the
// chunks wholly before its call, none after.
func TestEventsInChunks(t *testing.T) {
	r, err := New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.xuids = []string{"a", "b"}
	r.kinds = []kind{{service: "profile"}, {service: "social"}}
	n := 2*eventChunk + 3
	for _, backwards := range []bool{false, true} {
		e := &events{r: r}
		for i := range n {
			at := i
			if backwards {
				at = n - 1 - i
			}
			e.add(call{at: time.Duration(at), user: int32(at % 2), kind: int32(at % 2)})
		}
		if backwards {
			e.sort()
		}
		if e.Len() != n || len(e.chunks) != 3 {
			t.Fatalf("%d events in %d chunks", e.Len(), len(e.chunks))
		}
		for _, i := range []int{0, eventChunk - 1, eventChunk, 2 * eventChunk, n - 1} {
			if ev := e.Event(i); ev.At != time.Duration(i) || ev.User != r.xuids[i%2] || ev.Service != r.kinds[i%2].service {
				t.Errorf("backwards %v: event %d: %+v", backwards, i, ev)
			}
		}
		e.Release(2*eventChunk - 1)
		if e.chunks[0] != nil || e.chunks[1] == nil || e.Event(2*eventChunk-1).At != 2*eventChunk-1 {
			t.Errorf("Release(%d): chunks held %v %v %v", 2*eventChunk-1, e.chunks[0] != nil, e.chunks[1] != nil, e.chunks[2] != nil)
		}
	}
}
