// Package transportprom exports a transport.Transport's counters and the
// limits it learned as Prometheus metrics, for a service that serves
// /metrics with the Prometheus client rather than OpenTelemetry (package
// fgrlotel). It is apart from package transport so that a program using
// the transport does not import the Prometheus client:
//
//	tr := &transport.Transport{TitleID: "1234567890"}
//	prometheus.MustRegister(transportprom.Collector(tr))
package transportprom

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/xblgo/fgrl/transport"
)

// Collector returns a prometheus.Collector reading t on each scrape:
//
//	fgrl_transport_attempts_total         requests sent, retries included
//	fgrl_transport_retries_total          attempts after a call's first
//	fgrl_transport_waits_total            waits before an attempt
//	fgrl_transport_local_refusals_total   calls refused without sending
//	fgrl_transport_server_429s_total      429 answers received
//	fgrl_transport_shadow_refusals_total  calls the budget would have refused (Shadow)
//	fgrl_transport_budget_errors_total    failures of the shared budget store
//	fgrl_transport_coalesced_total        reads answered without a request (CoalesceReads)
//	fgrl_transport_limits_learned_total   limits learned from 429 bodies (drift)
//	fgrl_transport_limit{scope,period,source}  each limit learned for a whole scope (source "learned") beside the data's ("table", 0: none)
//
// Several transports need a Collector each, registered with a
// prometheus.WrapRegistererWith label that tells them apart.
func Collector(t *transport.Transport) prometheus.Collector { return collector{t} }

type collector struct{ t *transport.Transport }

var (
	descs = map[string]*prometheus.Desc{}
	names = []struct{ name, help string }{
		{"attempts", "Requests sent to the service, retries included."},
		{"retries", "Attempts after a call's first."},
		{"waits", "Waits before an attempt (the budget, a cached Retry-After)."},
		{"local_refusals", "Calls refused without sending."},
		{"server_429s", "429 answers received."},
		{"shadow_refusals", "Calls the budget would have refused (Shadow mode)."},
		{"budget_errors", "Failures of the shared budget store."},
		{"coalesced", "Reads answered by another call's request or the read cache."},
		{"limits_learned", "Limits learned from 429 bodies that differ from the limits data (drift)."},
	}
	descLimit = prometheus.NewDesc("fgrl_transport_limit", "A limit the transport learned and confirmed from 429 bodies (source learned) beside the limits data's (source table; 0: none), by scope and period.",
		[]string{"scope", "period", "source"}, nil)
)

func init() {
	for _, n := range names {
		descs[n.name] = prometheus.NewDesc("fgrl_transport_"+n.name+"_total", n.help, nil, nil)
	}
}

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, n := range names {
		ch <- descs[n.name]
	}
	ch <- descLimit
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	s := c.t.Stats()
	for name, v := range map[string]int64{
		"attempts": s.Attempts, "retries": s.Retries, "waits": s.Waits, "local_refusals": s.LocalRefusals,
		"server_429s": s.Server429s, "shadow_refusals": s.ShadowRefusals, "budget_errors": s.BudgetErrors,
		"coalesced": s.Coalesced, "limits_learned": s.LimitsLearned,
	} {
		ch <- prometheus.MustNewConstMetric(descs[name], prometheus.CounterValue, float64(v))
	}
	for _, l := range c.t.LearnedLimits() {
		if l.User != "" {
			continue // one user's, awaiting confirmation: not the scope's limit (and a label per user would grow without bound)
		}
		ch <- prometheus.MustNewConstMetric(descLimit, prometheus.GaugeValue, float64(l.Learned), l.Scope, l.Period.String(), "learned")
		ch <- prometheus.MustNewConstMetric(descLimit, prometheus.GaugeValue, float64(l.Table), l.Scope, l.Period.String(), "table")
	}
}
