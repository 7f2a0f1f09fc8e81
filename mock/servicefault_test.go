package mock

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/xblgo/fgrl/ratelimit"
	"github.com/xblgo/fgrl/throttle"
)

// TestServiceFaults: a two-minute presence read outage answers 429 with the
// Retry-After asked for and the documented body, to presence only, and
// ends on time; a scope's fault leaves the service's other scopes alone;
// a fault for no service is refused, the faults unchanged; each switch is
// logged.
func TestServiceFaults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log bytes.Buffer
		h := Must(New(Config{Logger: slog.New(slog.NewTextHandler(&log, nil))}))
		outage := Faults{Services: []ServiceFault{
			{Service: "presence/read", Status: 429, RetryAfter: throttle.Duration(30 * time.Second), For: throttle.Duration(2 * time.Minute)},
			{Service: "presence/write", Status: 503},
		}}
		if err := h.SetFaults(outage); err != nil {
			t.Fatal(err)
		}
		tok := Token(xuid1, title1)
		r := do(t, h, "GET", presenceURL, tok, "")
		b, err := ratelimit.ParseBody([]byte(r.body))
		if r.status != 429 || r.header.Get("Retry-After") != "30" || err != nil || b.LimitType != "Rate" {
			t.Errorf("presence in the outage: %d %q %s (%v), want 429, Retry-After 30 and the documented body", r.status, r.header.Get("Retry-After"), r.body, err)
		}
		if r := do(t, h, "GET", profileURL, tok, ""); r.status != 200 {
			t.Errorf("profile during a presence outage: %d", r.status)
		}
		write := presenceURL + "/devices/current/titles/current"
		if r := do(t, h, "POST", write, tok, `{"state":"active"}`); r.status != 503 {
			t.Errorf("presence/write's fault: %d, want 503", r.status)
		}
		time.Sleep(2*time.Minute + time.Second)
		if r := do(t, h, "GET", presenceURL, tok, ""); r.status != 200 {
			t.Errorf("presence after the outage: %d, want 200", r.status)
		}
		if m := h.Metrics(); !cmp.Equal(m.FaultsActive, map[string]int{"presence/write": 1}) ||
			m.FaultsInjected[[2]string{"presence/read", "429"}] != 1 || m.FaultsInjected[[2]string{"presence/write", "503"}] != 1 {
			t.Errorf("metrics: active %v, injected %v", m.FaultsActive, m.FaultsInjected)
		}
		before := h.Faults()
		if err := h.SetFaults(Faults{Services: []ServiceFault{{Service: "presense", Status: 429}}}); err == nil || !strings.Contains(err.Error(), `no rule has service or scope "presense"`) {
			t.Errorf("a fault for no service: %v", err)
		}
		if d := cmp.Diff(before, h.Faults()); d != "" {
			t.Errorf("a refused fault changed the faults (-before +after)\n%s", d)
		}
		if !strings.Contains(log.String(), `msg="fgrl mock: faults set"`) || !strings.Contains(log.String(), "presence/read: 429 until 2000-01-01T00:02:00Z; presence/write: 503") {
			t.Errorf("the switch was not logged as set:\n%s", log.String())
		}
	})
}

// TestServiceFaultShare: a fault on a share of requests hits about that
// share, a reset closes the connection, and a latency-only fault delays
// the mock's own answer.
func TestServiceFaultShare(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := Must(New(Config{LegacyTitles: []string{title1}, Faults: Faults{Seed: 7}}))
		h.SetFaults(Faults{Seed: 7, Services: []ServiceFault{{Service: "social", Status: 500, Rate: 0.25}}})
		failed := 0
		for range 400 {
			if do(t, h, "GET", "https://social.xboxlive.com/users/me/people", Token(xuid1, title1), "").status == 500 {
				failed++
			}
		}
		if failed < 70 || failed > 130 {
			t.Errorf("%d of 400 failed, want about 100", failed)
		}
		h.SetFaults(Faults{Services: []ServiceFault{{Service: "privacy", Reset: true}, {Service: "profile", Latency: throttle.Duration(5 * time.Second)}}})
		if _, err := h.RoundTrip(mustRequest("GET", "https://privacy.xboxlive.com/users/me/permission/validate?setting=x&target=xuid(2)")); err == nil {
			t.Error("privacy answered through a reset")
		}
		start := time.Now()
		if r := do(t, h, "GET", profileURL, Token(xuid1, title1), ""); r.status != 200 || time.Since(start) != 5*time.Second {
			t.Errorf("profile with 5s latency: %d after %v", r.status, time.Since(start))
		}
	})
}

func mustRequest(method, url string) *http.Request {
	req, _ := http.NewRequest(method, url, nil)
	req.Header.Set("Authorization", Token(xuid1, title1))
	return req
}

// TestAdminServiceFaults: the admin API switches a service fault on (its
// end worked out from "for") and refuses a bad one, changing nothing.
func TestAdminServiceFaults(t *testing.T) {
	h := NewHandler()
	srv := serveAll(t, h)
	var f Faults
	if code := api(t, srv, "PUT", "/_fgrl/api/faults", `{"services": [{"service": "presence", "status": 429, "retryAfter": "30s", "for": "2m"}]}`, &f); code != 200 ||
		len(f.Services) != 1 || f.Services[0].Until.IsZero() || f.Services[0].RetryAfter != throttle.Duration(30*time.Second) {
		t.Fatalf("PUT: %d %+v", code, f)
	}
	var e apiError
	for _, body := range []string{`{"services": [{"service": "presence", "status": 404}]}`, `{"services": [{"service": "nobody", "status": 429}]}`,
		`{"services": [{"service": "presence", "status": 429, "for": "soon"}]}`} {
		if code := api(t, srv, "PUT", "/_fgrl/api/faults", body, &e); code != 400 || e.Error == "" {
			t.Errorf("PUT %s: %d %q", body, code, e.Error)
		}
	}
	if got := h.Faults(); len(got.Services) != 1 || got.Services[0].Service != "presence" {
		t.Errorf("refused faults changed them: %+v", got)
	}
}
