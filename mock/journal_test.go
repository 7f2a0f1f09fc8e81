package mock

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/xblgo/fgrl/throttle"
)

// logLines decodes the JSON lines a slog.JSONHandler wrote.
func logLines(t *testing.T, b *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.SplitSeq(strings.TrimSpace(b.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%v: %q", err, line)
		}
		delete(m, "time")
		delete(m, "tookMs")
		out = append(out, m)
	}
	return out
}

// TestLogger: each answered request is one line with its key's counts after
// it; a 429 carries the counts that refused it; a host the mock does not
// serve has no key; a reset is logged as aborted; the token never appears.
func TestLogger(t *testing.T) {
	var buf bytes.Buffer
	h := Must(New(Config{Logger: slog.New(slog.NewJSONHandler(&buf, nil))}))
	tok := Token(xuid1, title1)
	for range 11 { // profile: burst 10 / 15 s
		do(t, h, "GET", profileURL, tok, "")
	}
	do(t, h, "GET", "https://nosuch.xboxlive.com/x", tok, "")
	lines := logLines(t, &buf)
	if len(lines) != 12 {
		t.Fatalf("%d lines, want 12:\n%s", len(lines), buf.String())
	}
	key := func(status, burst, sustain float64) map[string]any {
		return map[string]any{"level": "INFO", "msg": "request", "method": "GET", "host": "profile.xboxlive.com",
			"path": "/users/me/profile/settings", "status": status, "scope": "profile", "user": UserHash(xuid1),
			"title": title1, "burst": burst, "burstLimit": 10.0, "sustain": sustain, "sustainLimit": 30.0}
	}
	want := []map[string]any{
		key(200, 1, 1),
		key(200, 10, 10),
		key(429, 11, 11),
		{"level": "INFO", "msg": "request", "method": "GET", "host": "nosuch.xboxlive.com", "path": "/x", "status": 404.0},
	}
	got := []map[string]any{lines[0], lines[9], lines[10], lines[11]}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("log lines (-want +got):\n%s", diff)
	}
	if strings.Contains(buf.String(), tok[strings.Index(tok, ";")+1:]) {
		t.Error("the log carries the token")
	}

	buf.Reset()
	h = Must(New(Config{Logger: slog.New(slog.NewJSONHandler(&buf, nil)), Faults: Faults{ResetRate: 1}}))
	req, _ := http.NewRequest("GET", profileURL, nil)
	req.Header.Set("Authorization", tok)
	if _, err := h.RoundTrip(req); err == nil {
		t.Fatal("no reset")
	}
	if got := logLines(t, &buf); len(got) != 1 || got[0]["aborted"] != true || got[0]["status"] != 0.0 {
		t.Errorf("reset logged as %v", got)
	}
}

// TestLogIsTheRecord: each log line is the call the journal keeps, line
// for line: the same method, host, path, status, abort and key. Before,
// the log was written from the request apart from the record: the host
// kept its port, and an answer cut short (a truncation fault) was logged
// with the status it had begun (200) while the record said 0, aborted.
// Both now say the status it went out with (200), aborted.
func TestLogIsTheRecord(t *testing.T) {
	var buf bytes.Buffer
	h := Must(New(Config{Logger: slog.New(slog.NewJSONHandler(&buf, nil)), Faults: Faults{TruncateRate: 1}}))
	tok := Token(xuid1, title1)
	req, _ := http.NewRequest("GET", profileURL, nil)
	req.Host = "profile.xboxlive.com:443"
	req.Header.Set("Authorization", tok)
	if resp, err := h.RoundTrip(req); err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	do(t, h, "GET", "https://nosuch.xboxlive.com/x?y=1", tok, "")
	lines := logLines(t, &buf)
	calls := h.Calls(CallFilter{})
	if len(lines) != len(calls) || len(calls) != 2 {
		t.Fatalf("%d lines for %d calls, want 2 each", len(lines), len(calls))
	}
	for i, c := range calls {
		u, _ := url.Parse(c.URL)
		want := map[string]any{"level": "INFO", "msg": "request", "method": c.Method, "host": u.Host, "path": u.Path, "status": float64(c.Status)}
		if c.Aborted {
			want["aborted"] = true
		}
		if c.Scope != "" {
			want["scope"], want["user"], want["title"] = c.Scope, UserHash(c.XUID), c.Title
			want["burst"], want["burstLimit"], want["sustain"], want["sustainLimit"] = 1.0, 10.0, 1.0, 30.0
		}
		if diff := cmp.Diff(want, lines[i]); diff != "" {
			t.Errorf("line %d against its call %+v (-want +got):\n%s", i, c, diff)
		}
	}
	if !calls[0].Aborted || calls[0].Status != http.StatusOK || calls[0].URL != profileURL {
		t.Errorf("the truncated call recorded as %+v", calls[0])
	}
}

// TestJournalCountsEachCall: the counters are the journal's calls counted
// as they come, one set per rule scope: a request FGRL counted, a 429, a
// 503 of a store that failed, each service fault by kind; a request the
// mock did not count (a 401, a call it does not serve) counts nowhere.
func TestJournalCountsEachCall(t *testing.T) {
	h := Must(New(Config{Faults: Faults{Services: []ServiceFault{{Service: "presence", Status: 503}}}}))
	tok := Token(xuid1, title1)
	for range 11 {
		do(t, h, "GET", profileURL, tok, "") // the 11th: 429
	}
	do(t, h, "GET", presenceURL, tok, "")                                     // 503, injected
	do(t, h, "GET", profileURL, "XBL3.0 x=1;nonsense", "")                    // 401: not counted
	do(t, h, "GET", "https://profile.xboxlive.com/users/me/nothing", tok, "") // not served: not counted
	got := h.Metrics()
	want := Metrics{Scopes: map[string]ScopeCounts{"profile": {Requests: 11, Throttled: 1}, "presence/read": {Requests: 1, Unavailable: 1}},
		Keys: 2, StoreKeys: 2, FaultsActive: map[string]int{"presence": 1}, FaultsInjected: map[[2]string]int64{{"presence/read", "503"}: 1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
	if n := len(h.Calls(CallFilter{})); n != 14 {
		t.Errorf("%d calls recorded, want 14: every request answered is one", n)
	}
}

// downStore is a counts' store that fails every decision, as Redis does
// in an outage.
type downStore struct{ throttle.MemoryServerStore }

func (*downStore) Take(context.Context, throttle.Key, throttle.Limit, time.Time) (throttle.Decision, error) {
	return throttle.Decision{}, errors.New("down")
}

// TestJournalCountsStoreFailures: a store that fails is a store error
// each time, and a 503 of its scope unless FailOpen serves the request.
func TestJournalCountsStoreFailures(t *testing.T) {
	for _, failOpen := range []bool{false, true} {
		h := Must(New(Config{Store: &downStore{}, FailOpen: failOpen}))
		r := do(t, h, "GET", profileURL, Token(xuid1, title1), "")
		want := Metrics{Scopes: map[string]ScopeCounts{"profile": {Requests: 1, Unavailable: 1}}, StoreKeys: -1, StoreErrors: 1,
			FaultsActive: map[string]int{}, FaultsInjected: map[[2]string]int64{}}
		wantStatus := http.StatusServiceUnavailable
		if failOpen {
			want.Scopes["profile"], wantStatus = ScopeCounts{Requests: 1}, http.StatusOK
		}
		if diff := cmp.Diff(want, h.Metrics()); diff != "" || r.status != wantStatus {
			t.Errorf("FailOpen %v: status %d, want %d; metrics (-want +got):\n%s", failOpen, r.status, wantStatus, diff)
		}
	}
}
