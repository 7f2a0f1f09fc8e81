package mock

import (
	"net/http"
	"time"
)

// RTAService is the name a ServiceFault gives the Real-Time Activity
// service.
const RTAService = "rta"

// rtaFaults are the rta service faults in force, each kind apart: the
// code that refuses subscriptions (1001, 1002: the first such fault) and
// the share of them (0: all), whether upgrades are refused (a 503), and
// the delay of an event published now: the longest of the latency faults'
// latencies, each cut at its fault's end (on the handler's clock).
type rtaFaults struct {
	subscribe int
	rate      float64
	upgrade   bool
	delay     time.Duration
}

// rtaFault returns the rta service faults in force.
func (h *Handler) rtaFault() (r rtaFaults) {
	f := h.faults.Load()
	if !f.any {
		return r
	}
	now := h.cfg.now()
	for i := range f.f.Services {
		sf := &f.f.Services[i]
		if sf.Service != RTAService || !sf.inForce(now) {
			continue
		}
		switch sf.Status {
		case rtaThrottled, rtaServiceUnavailable:
			if r.subscribe == 0 {
				r.subscribe, r.rate = sf.Status, sf.Rate
			}
		case http.StatusServiceUnavailable:
			r.upgrade = true
		}
		d := time.Duration(sf.Latency)
		if !sf.Until.IsZero() {
			d = min(d, sf.Until.Sub(now))
		}
		r.delay = max(r.delay, d)
	}
	return r
}

// dropRTA drops every RTA connection open when faults set now hold an rta
// Reset: a title rehearses a lost connection.
func (h *Handler) dropRTA(sfs []ServiceFault, now time.Time) {
	for _, sf := range sfs {
		if sf.Service == RTAService && sf.Reset && sf.inForce(now) {
			h.rta.dropAll()
			return
		}
	}
}
