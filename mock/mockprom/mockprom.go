// Package mockprom exports a mock.Handler's counters as Prometheus metrics.
// It is apart from package mock so that a program that imports mock for its
// tests does not import the Prometheus client; xblcall mock serves it at
// /metrics:
//
//	h := mock.NewHandler()
//	srv := httptest.NewServer(admin.WithServices(h, admin.Config{Metrics: mockprom.Handler(h)}))
package mockprom

import (
	"net/http"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/xblgo/fgrl/mock"
)

// Handler serves h's metrics in Prometheus's text format, from a registry
// made on the first scrape:
//
//	fgrl_mock_requests_total{scope}     requests to a service, by rule scope
//	fgrl_mock_throttled_total{scope}    429 answers (FGRL's, injected faults, counted script rules), by rule scope
//	fgrl_mock_unavailable_total{scope}  503 answers (store failures, injected faults), by rule scope
//	fgrl_mock_keys                      keys the calls in the mock's journal were counted against (mock.Metrics.Keys)
//	fgrl_mock_store_keys                keys the in-memory store holds (absent with another store)
//	fgrl_mock_store_errors_total        failures of the counts' store
func Handler(h *mock.Handler) http.Handler {
	var once sync.Once
	var handler http.Handler
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() {
			reg := prometheus.NewRegistry()
			reg.MustRegister(collector{h})
			handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
		})
		handler.ServeHTTP(w, r)
	})
}

// collector reads the Handler's counters on each scrape.
type collector struct{ h *mock.Handler }

var (
	descRequests    = prometheus.NewDesc("fgrl_mock_requests_total", "Requests to a service, by rule scope.", []string{"scope"}, nil)
	descThrottled   = prometheus.NewDesc("fgrl_mock_throttled_total", "429 answers, by rule scope.", []string{"scope"}, nil)
	descUnavailable = prometheus.NewDesc("fgrl_mock_unavailable_total", "503 answers (store failures, injected faults), by rule scope.", []string{"scope"}, nil)
	descKeys        = prometheus.NewDesc("fgrl_mock_keys", "Keys the calls in the mock's journal were counted against.", nil, nil)
	descStoreKeys   = prometheus.NewDesc("fgrl_mock_store_keys", "Keys the in-memory store holds, idle ones not yet dropped included.", nil, nil)
	descStoreErrors = prometheus.NewDesc("fgrl_mock_store_errors_total", "Failures of the counts' store.", nil, nil)
	descSwitches    = prometheus.NewDesc("fgrl_mock_fault_switches_total", "Changes of the faults in force (SetFaults, the admin API).", nil, nil)
	descActive      = prometheus.NewDesc("fgrl_mock_service_faults", "Service faults in force now, by service or scope.", []string{"service"}, nil)
	descInjected    = prometheus.NewDesc("fgrl_mock_service_faults_injected_total", "Service faults answered, by rule scope and kind (429, 500, 503, reset, latency).", []string{"scope", "kind"}, nil)
)

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descRequests, descThrottled, descUnavailable, descKeys, descStoreKeys, descStoreErrors,
		descSwitches, descActive, descInjected} {
		ch <- d
	}
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	m := c.h.Metrics()
	for scope, n := range m.Scopes {
		ch <- prometheus.MustNewConstMetric(descRequests, prometheus.CounterValue, float64(n.Requests), scope)
		ch <- prometheus.MustNewConstMetric(descThrottled, prometheus.CounterValue, float64(n.Throttled), scope)
		ch <- prometheus.MustNewConstMetric(descUnavailable, prometheus.CounterValue, float64(n.Unavailable), scope)
	}
	ch <- prometheus.MustNewConstMetric(descKeys, prometheus.GaugeValue, float64(m.Keys))
	if m.StoreKeys >= 0 {
		ch <- prometheus.MustNewConstMetric(descStoreKeys, prometheus.GaugeValue, float64(m.StoreKeys))
	}
	ch <- prometheus.MustNewConstMetric(descStoreErrors, prometheus.CounterValue, float64(m.StoreErrors))
	ch <- prometheus.MustNewConstMetric(descSwitches, prometheus.CounterValue, float64(m.FaultSwitches))
	for service, n := range m.FaultsActive {
		ch <- prometheus.MustNewConstMetric(descActive, prometheus.GaugeValue, float64(n), service)
	}
	for k, n := range m.FaultsInjected {
		ch <- prometheus.MustNewConstMetric(descInjected, prometheus.CounterValue, float64(n), k[0], k[1])
	}
}
