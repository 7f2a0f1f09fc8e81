package transportprom_test

import (
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/transport"
	"github.com/xblgo/fgrl/transport/transportprom"
)

// TestCollector: a service applying profile's burst at 6 where the table
// says 10: after 8 calls of each of two users (retries off) the scrape
// shows the attempts, each user's 429, the local refusals that followed,
// the two changes of the limit (one user's, then confirmed for the scope)
// and the drift of the burst beside the table's; a limit of one user alone
// is not a series.
func TestCollector(t *testing.T) {
	served, err := limits.Read(strings.NewReader(`{"rules": [{"service": "profile", "hosts": ["profile.xboxlive.com"], "burst": 6, "sustain": 30}]}`))
	if err != nil {
		t.Fatal(err)
	}
	h, _ := mock.New(mock.Config{Limits: served})
	tr := &transport.Transport{Base: h, TitleID: "1234567890", RetryWindow: -1}
	for _, xuid := range []string{"2533274791234567", "2533274797654321"} {
		for range 8 {
			req, _ := http.NewRequest("GET", "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag", nil)
			req.Header.Set("Authorization", mock.Token(xuid, "1234567890"))
			if resp, err := (&http.Client{Transport: tr}).Do(req); err == nil {
				resp.Body.Close()
			}
		}
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(transportprom.Collector(tr))
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			v := m.GetCounter().GetValue() + m.GetGauge().GetValue()
			got = append(got, f.GetName()+"{"+strings.Join(labels, ",")+"} "+strconv.FormatFloat(v, 'f', -1, 64))
		}
	}
	sort.Strings(got)
	want := []string{
		"fgrl_transport_attempts_total{} 14",
		"fgrl_transport_budget_errors_total{} 0",
		"fgrl_transport_coalesced_total{} 0",
		"fgrl_transport_limits_learned_total{} 2",
		"fgrl_transport_limit{period=burst,scope=profile,source=learned} 6",
		"fgrl_transport_limit{period=burst,scope=profile,source=table} 10",
		"fgrl_transport_local_refusals_total{} 2",
		"fgrl_transport_retries_total{} 0",
		"fgrl_transport_server_429s_total{} 2",
		"fgrl_transport_shadow_refusals_total{} 0",
		"fgrl_transport_waits_total{} 0",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("scrape (-want +got):\n%s", diff)
	}
}
