package proxy

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/throttle"
)

// TestStatus: after a burst, the admin API lists the key with its budget
// (durations as Go duration strings, instants RFC 3339) and the counters;
// the live page is served with its CSP; /metrics is not there unless
// Config.Metrics is.
func TestStatus(t *testing.T) {
	f := serve(t, nil)
	burst(t, f.client, 12, profileURL, xuid1, HeaderFailFast, "true")
	resp, body := rawRequest(t, f.addr, "GET /_fgrl/api/status HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("status: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var raw struct {
		Keys []map[string]any `json:"keys"`
	}
	json.Unmarshal([]byte(body), &raw)
	if len(raw.Keys) != 1 {
		t.Fatalf("status lists %d keys, want 1: %s", len(raw.Keys), body)
	}
	if w, _ := raw.Keys[0]["wait"].(string); !strings.HasSuffix(w, "s") {
		t.Errorf("wait %v, want a Go duration string", raw.Keys[0]["wait"])
	}
	var st Status
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatal(err)
	}
	want := KeyBudget{User: mock.UserHash(xuid1), Title: title, Scope: "profile",
		Counts: throttle.Counts{Burst: throttle.WindowState{Count: 10, Limit: 10}, Sustain: throttle.WindowState{Count: 10, Limit: 30}}}
	ignore := cmpopts.IgnoreFields(KeyBudget{}, "Wait", "LastCall", "Counts.Burst.Reset", "Counts.Sustain.Reset")
	if diff := cmp.Diff(want, st.Keys[0], ignore); diff != "" {
		t.Errorf("the key's budget mismatch (-want +got):\n%s", diff)
	}
	if st.Keys[0].Wait <= 0 || time.Since(st.Keys[0].LastCall) > time.Minute {
		t.Errorf("wait %v, last call %v: want a wait and a recent call", st.Keys[0].Wait, st.Keys[0].LastCall)
	}
	if want := (Stats{Served: 10, RefusedLocally: 2}); st.Calls != want {
		t.Errorf("calls %+v, want %+v", st.Calls, want)
	}
	if st.Transport.Attempts != 10 || st.Transport.LocalRefusals != 2 {
		t.Errorf("transport %+v, want 10 attempts and 2 local refusals", st.Transport)
	}
	page, html := rawRequest(t, f.addr, "GET /_fgrl/ HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
	if page.StatusCode != 200 || !strings.Contains(page.Header.Get("Content-Security-Policy"), "default-src 'self'") || !strings.Contains(html, "api/status") {
		t.Errorf("the live page: %d %q", page.StatusCode, page.Header.Get("Content-Security-Policy"))
	}
	if m, _ := rawRequest(t, f.addr, "GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"); m.StatusCode != http.StatusNotFound {
		t.Errorf("/metrics without Config.Metrics: %d, want 404", m.StatusCode)
	}
}

// TestKeysBounded: the proxy remembers at most maxTracked keys, forgetting
// the one seen longest ago; a status lists at most maxListed of them, the
// latest first, and counts the rest.
func TestKeysBounded(t *testing.T) {
	var kt keyTracker
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range maxTracked + 10 {
		kt.seen(throttle.Key{User: strconv.Itoa(i), Scope: "profile"}, t0.Add(time.Duration(i)*time.Millisecond))
	}
	got := kt.latest(t0)
	if len(got) != maxTracked || got[0].key.User != strconv.Itoa(maxTracked+9) || got[len(got)-1].key.User != "10" {
		t.Errorf("%d keys, latest %v, oldest %v; want %d, the newest first, the 10 oldest forgotten", len(got), got[0].key, got[len(got)-1].key, maxTracked)
	}
	s := inProcess(t, mock.NewHandler(), nil)
	now := time.Now()
	for i := range maxListed + 5 {
		s.keys.seen(throttle.Key{User: strconv.Itoa(i), Title: title, Scope: "profile"}, now)
	}
	if st := s.Status(); len(st.Keys) != maxListed || st.MoreKeys != 5 {
		t.Errorf("status lists %d keys and %d more, want %d and 5", len(st.Keys), st.MoreKeys, maxListed)
	}
}
