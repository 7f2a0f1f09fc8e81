package transport

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/xblgo/fgrl/mock"
)

// eventLog collects a Transport's events as one line each.
type eventLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *eventLog) observe(_ context.Context, e Event) {
	wait := e.Wait
	if e.Kind == EventRetry {
		wait = wait.Truncate(5 * time.Second) // the jitter XSAPI adds
	}
	line := fmt.Sprintf("%s %s/%s #%d %d wait=%v %s", e.Kind, e.Scope, e.Class, e.Attempt, e.Status, wait, e.Reason)
	if e.Body != nil {
		line += fmt.Sprintf(" body=%d/%d", e.Body.CurrentRequests, e.Body.MaxRequests)
	}
	l.mu.Lock()
	l.lines = append(l.lines, line)
	l.mu.Unlock()
}

// TestObserve: the events of a call XSAPI-style retries through 429s (the
// budget off), of one the budget makes wait, and of one it refuses; with
// the 429's body fields.
func TestObserve(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var plain, budget eventLog
		h := mock.NewHandler()
		for i := 0; i < 10; i++ { // spend the service's burst for xuid1
			get(t, h, context.Background(), profileURL, xuid1)
		}
		tr := &Transport{Base: h, TitleID: title, DisableBudget: true, RetryWindow: time.Minute, Observe: plain.observe}
		get(t, tr, context.Background(), profileURL, xuid1)
		want := []string{
			"attempt profile/read #1 429 wait=0s ",
			"server_429 profile/read #1 429 wait=15s  body=11/10",
			"retry profile/read #1 429 wait=15s status 429",
			"attempt profile/read #2 200 wait=0s ",
		}
		if diff := cmp.Diff(want, plain.lines); diff != "" {
			t.Errorf("retried call (-want +got):\n%s", diff)
		}

		tr = &Transport{Base: mock.NewHandler(), TitleID: title, Observe: budget.observe}
		for i := 0; i < 11; i++ {
			get(t, tr, context.Background(), profileURL, xuid2)
		}
		for i := 0; i < 19; i++ {
			get(t, tr, context.Background(), profileURL, xuid2)
		}
		get(t, tr, context.Background(), profileURL, xuid2) // past the sustain limit: refused
		var waits, refusals []string
		for _, l := range budget.lines {
			switch {
			case len(l) > 4 && l[:4] == "wait":
				waits = append(waits, l)
			case len(l) > 13 && l[:13] == "local_refusal":
				refusals = append(refusals, l)
			}
		}
		if len(waits) == 0 || waits[0] != "wait profile/read #0 0 wait=16s budget" {
			t.Errorf("waits %q", waits)
		}
		if len(refusals) != 1 || refusals[0][:30] != "local_refusal profile/read #0 " {
			t.Errorf("refusals %q", refusals)
		}
	})
}

// TestOneEventStream: Stats, the log and Observe are three readers of one
// stream of events, so their counts agree, kind by kind, over calls that
// retry through 429s, wait for the budget and are refused by it.
func TestOneEventStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		heard := map[string]int64{}
		var logs logBuffer
		h := mock.NewHandler()
		for range 10 { // spend the service's burst for xuid1
			get(t, h, context.Background(), profileURL, xuid1)
		}
		tr := &Transport{Base: h, TitleID: title, RetryWindow: time.Minute, Shadow: false,
			Logger:  slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
			Observe: func(_ context.Context, e Event) { heard[e.Kind.String()]++ }}
		for range 40 {
			get(t, tr, context.Background(), profileURL, xuid1)
		}
		logged := map[string]int64{}
		for _, line := range strings.Split(logs.String(), "\n") {
			if _, rest, ok := strings.Cut(line, `msg="fgrl: `); ok {
				logged[rest[:strings.IndexByte(rest, '"')]]++
			}
		}
		s := tr.Stats()
		counted := map[string]int64{"attempt": s.Attempts, "retry": s.Retries, "wait": s.Waits,
			"local_refusal": s.LocalRefusals, "server_429": s.Server429s}
		for k, n := range counted {
			if n == 0 {
				delete(counted, k)
			}
		}
		if diff := cmp.Diff(counted, heard); diff != "" {
			t.Errorf("Stats vs Observe (-stats +observe):\n%s", diff)
		}
		if diff := cmp.Diff(heard, logged); diff != "" {
			t.Errorf("Observe vs log (-observe +log):\n%s", diff)
		}
		for _, k := range []string{"attempt", "retry", "wait", "local_refusal", "server_429"} {
			if heard[k] == 0 {
				t.Errorf("no %s event: the scenario must cover every kind (%v)", k, heard)
			}
		}
	})
}
