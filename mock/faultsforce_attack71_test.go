package mock_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/throttle"
)

// attack71Clock is a clock moved by hand.
type attack71Clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *attack71Clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *attack71Clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

const attack71Presence = "https://userpresence.xboxlive.com/users/me"

func attack71Status(t *testing.T, h *mock.Handler, url string, hdr map[string]string) int {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", mock.Token("2533274791234567", "1234567890"))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := h.RoundTrip(req)
	if err != nil {
		return -1
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestAttack71ConfigFaultsForNeverEnds: a service fault given in Config.Faults
// with For 2m ("injected from the start") never ends: three minutes on,
// presence still answers 429, Faults lists the fault (with no Until) as
// in force, Metrics counts it active and the overview shows it; an rta
// fault so given still refuses upgrades. New stores Config.Faults as they
// are; only SetFaults works out Until from For.
//
// Promised (mock.ServiceFault.For): "For is how long the fault lasts from
// when it is set (0: until changed)"; (Config.Faults) "Faults are
// injected from the start"; (Handler.Faults) "the faults in force: a
// service fault whose For has passed is not among them".
func TestAttack71ConfigFaultsForNeverEnds(t *testing.T) {
	clock := &attack71Clock{t: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	h := mock.Must(mock.New(mock.Config{Now: clock.now, Faults: mock.Faults{Services: []mock.ServiceFault{
		{Service: "presence", Status: 429, For: throttle.Duration(2 * time.Minute)},
		{Service: mock.RTAService, Status: 503, For: throttle.Duration(2 * time.Minute)},
	}}}))
	if s := attack71Status(t, h, attack71Presence, nil); s != 429 {
		t.Fatalf("presence in the outage: %d, want 429", s)
	}
	clock.add(3 * time.Minute)
	if s := attack71Status(t, h, attack71Presence, nil); s != 200 {
		t.Errorf("presence a minute after a 2m fault given in Config.Faults ended: %d, want 200", s)
	}
	if f := h.Faults(); len(f.Services) != 0 {
		t.Errorf("Faults three minutes on lists %+v: not in force", f.Services)
	}
	if m := h.Metrics(); len(m.FaultsActive) != 0 {
		t.Errorf("Metrics three minutes on: FaultsActive %v", m.FaultsActive)
	}
	if o := h.Overview(context.Background()); len(o.Faults.Services) != 0 {
		t.Errorf("Overview three minutes on: faults %+v", o.Faults.Services)
	}
	rta := "https://rta.xboxlive.com" + mock.RTAPath
	if s := attack71Status(t, h, rta, map[string]string{"Sec-WebSocket-Protocol": mock.RTASubprotocol}); s == 503 {
		t.Errorf("rta upgrade three minutes after a 2m fault given in Config.Faults: %d", s)
	}
}

// held: a fault set with For, read back by Faults a minute on and set
// again as read (the admin API's GET then PUT), keeps its Until: it ends
// two minutes after it was first set, not after the round trip; once
// ended it applies nowhere: presence answers 200, an rta 503 no longer
// refuses upgrades, Faults, Metrics and the overview list none. Promised
// (ServiceFault.For): "how long the fault lasts from when it is set";
// (Handler.Faults) "the faults in force: a service fault whose For has
// passed is not among them".
func TestAttack71FaultsRoundTripKeepsUntil(t *testing.T) {
	clock := &attack71Clock{t: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	h := mock.Must(mock.New(mock.Config{Now: clock.now}))
	if err := h.SetFaults(mock.Faults{Services: []mock.ServiceFault{
		{Service: "presence", Status: 429, For: throttle.Duration(2 * time.Minute)},
		{Service: mock.RTAService, Status: 503, For: throttle.Duration(2 * time.Minute)},
	}}); err != nil {
		t.Fatal(err)
	}
	rta := "https://rta.xboxlive.com" + mock.RTAPath
	if s := attack71Status(t, h, attack71Presence, nil); s != 429 {
		t.Fatalf("presence in the outage: %d", s)
	}
	if s := attack71Status(t, h, rta, map[string]string{"Sec-WebSocket-Protocol": mock.RTASubprotocol}); s != 503 {
		t.Fatalf("rta upgrade in the outage: %d", s)
	}
	for range 3 {
		clock.add(40 * time.Second)
		if err := h.SetFaults(h.Faults()); err != nil {
			t.Fatal(err)
		}
	}
	// 2m0s after the first set
	if s := attack71Status(t, h, attack71Presence, nil); s != 200 {
		t.Errorf("presence 2m after a 2m fault, round-tripped three times: %d, want 200", s)
	}
	if f := h.Faults(); len(f.Services) != 0 {
		t.Errorf("Faults: %+v", f.Services)
	}
	if m := h.Metrics(); len(m.FaultsActive) != 0 {
		t.Errorf("Metrics: FaultsActive %v", m.FaultsActive)
	}
	if o := h.Overview(context.Background()); len(o.Faults.Services) != 0 {
		t.Errorf("Overview: %+v", o.Faults.Services)
	}
	if s := attack71Status(t, h, rta, map[string]string{"Sec-WebSocket-Protocol": mock.RTASubprotocol}); s == 503 {
		t.Errorf("rta upgrade after the fault ended: %d", s)
	}
}
