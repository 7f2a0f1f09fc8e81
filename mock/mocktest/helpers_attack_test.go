package mocktest_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/racebuild"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/mock/mocktest"
)

func attackScript(t *testing.T, yaml string) mock.Script {
	t.Helper()
	s, err := mock.ReadScript(strings.NewReader(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func attackDo(t *testing.T, h http.RoundTripper, ctx context.Context, method, url string, body []byte) int {
	t.Helper()
	return attackDoAs(t, h, ctx, xuid, method, url, body)
}

func attackDoAs(t *testing.T, h http.RoundTripper, ctx context.Context, user, method, url string, body []byte) int {
	t.Helper()
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, _ := http.NewRequestWithContext(ctx, method, url, r)
	req.Header.Set("Authorization", mock.Token(user, title))
	resp, err := h.RoundTrip(req)
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// held: mocktest's doc: "NoThrottled fails t when the mock answered any
// call 429". A 429 the test's own script plays, and one a service fault
// injects, are 429s the code under test met: NoThrottled fails on each,
// naming the call.
func TestAttackNoThrottledSeesEvery429(t *testing.T) {
	scripted := mock.Must(mock.New(mock.Config{Script: attackScript(t, `
rules:
  - match: {host: userpresence.xboxlive.com}
    then: mock
    answers: [{status: 429, headers: {Retry-After: "1"}}]
`)}))
	faulted := mock.Must(mock.New(mock.Config{}))
	if err := faulted.SetFaults(mock.Faults{Services: []mock.ServiceFault{{Service: "presence", Status: 429}}}); err != nil {
		t.Fatal(err)
	}
	for name, h := range map[string]*mock.Handler{"scripted": scripted, "fault": faulted} {
		if code := attackDo(t, h, context.Background(), "GET", presence, nil); code != 429 {
			t.Fatalf("%s: setup: answer %d", name, code)
		}
		r := &recorder{TB: t}
		mocktest.NoThrottled(r, h)
		if len(r.failures) != 1 || !strings.Contains(r.failures[0], "userpresence.xboxlive.com") {
			t.Errorf("%s 429: NoThrottled reported %q", name, r.failures)
		}
	}
}

// held: mock.CheckOptions' doc: "Every check fails closed: when the
// record of calls (the latest 10,000) dropped calls made in the window it
// looks at, which could be the calls it is about, it fails, saying so";
// Calls: "at most the latest 10,000, within 32 MiB of heap in all".
//
// TestAttackNoThrottledFailsClosedOnBytes: one 429, then 2,600 presence
// posts of 15 KiB bodies, a user each (the record's heap bound, not its
// count, drops the 429): NoThrottled and Called still fail, saying the record is
// incomplete.
func TestAttackNoThrottledFailsClosedOnBytes(t *testing.T) {
	racebuild.Skip(t, "a volume test: 2,600 calls of 15 KiB on one goroutine")
	h := mock.Must(mock.New(mock.Config{Script: attackScript(t, `
rules:
  - match: {host: userpresence.xboxlive.com}
    then: mock
    answers: [{status: 429, headers: {Retry-After: "1"}}]
`)}))
	if code := attackDo(t, h, context.Background(), "GET", presence, nil); code != 429 {
		t.Fatalf("setup: answer %d", code)
	}
	body := []byte(`{"state": "active", "pad": "` + strings.Repeat("a", 15<<10) + `"}`)
	for i := range 2600 {
		user := fmt.Sprint(2533274800000000 + i) // a user each: no call is throttled
		if code := attackDoAs(t, h, context.Background(), user, "POST", "https://userpresence.xboxlive.com/users/xuid("+user+")/devices/current/titles/current", body); code/100 != 2 {
			t.Fatalf("post %d: answer %d", i, code)
		}
	}
	if len(h.Calls(mock.CallFilter{Status: 429})) != 0 {
		t.Fatal("setup: the 429 is still in the record: the bound was not reached")
	}
	r := &recorder{TB: t}
	mocktest.NoThrottled(r, h)
	mocktest.Called(r, h, mock.CallFilter{Host: "userpresence.xboxlive.com"}, 0)
	if len(r.failures) != 2 || !strings.Contains(r.failures[0], "incomplete") || !strings.Contains(r.failures[1], "incomplete") {
		t.Errorf("a 429 dropped from the record by its heap bound: failures %q", r.failures)
	}
}

// held: mocktest's helpers are one-line assertions a test calls at its
// end (README: "mocktest.NoThrottled(t, h) // any 429 reached the code
// under test"): with a call still hanging in the mock (a scripted "hang",
// "no answer until the client gives up"), each helper returns at once,
// and the helpers start no goroutine that outlives them.
func TestAttackHelpersDoNotWaitForHangingCalls(t *testing.T) {
	h := mock.Must(mock.New(mock.Config{Script: attackScript(t, `
rules:
  - match: {host: userpresence.xboxlive.com}
    then: mock
    answers: [{fault: hang}]
`)}))
	ctx, cancel := context.WithCancel(context.Background())
	hung := make(chan struct{})
	go func() { defer close(hung); attackDo(t, h, ctx, "GET", presence, nil) }()
	// The count once the hanging call has settled in the mock (three
	// samples alike, 20 ms apart: a loaded machine may take longer than
	// any one sleep to get it there).
	before, same := runtime.NumGoroutine(), 0
	for deadline := time.Now().Add(3 * time.Second); same < 3 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		if n := runtime.NumGoroutine(); n == before {
			same++
		} else {
			before, same = n, 0
		}
	}
	done := make(chan []string)
	go func() {
		r := &recorder{TB: t}
		mocktest.NoThrottled(r, h)
		mocktest.Called(r, h, mock.CallFilter{Host: "userpresence.xboxlive.com"}, 1)
		mocktest.Certifiable(r, h)
		mocktest.Check(r, h, mock.CheckOptions{No429: true, Certify: true})
		done <- r.failures
	}()
	select {
	case f := <-done:
		t.Logf("failures while a call hangs: %q", f)
	case <-time.After(10 * time.Second):
		t.Fatal("the helpers waited for a hanging call")
	}
	// The helpers' own goroutine has sent its result; give it time to end.
	after := runtime.NumGoroutine()
	for deadline := time.Now().Add(2 * time.Second); after > before && time.Now().Before(deadline); after = runtime.NumGoroutine() {
		time.Sleep(10 * time.Millisecond)
	}
	if after > before {
		t.Errorf("goroutines %d after the helpers, %d before", after, before)
	}
	cancel()
	select {
	case <-hung:
	case <-time.After(10 * time.Second):
		t.Fatal("the hanging call did not end with its context")
	}
}
