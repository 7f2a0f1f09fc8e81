package mock

import "time"

// RTAService is the name a ServiceFault gives the Real-Time Activity
// service.
const RTAService = "rta"

// rtaFault returns the rta service fault in force: the code that refuses
// subscriptions (1001, 1002) or upgrades (503), the delay of events, the
// share of subscriptions refused (0: all).
func (h *Handler) rtaFault() (refuse int, delay time.Duration, rate float64) {
	f := h.faults.Load()
	if !f.any {
		return 0, 0, 0
	}
	now := h.cfg.now()
	for i := range f.f.Services {
		sf := &f.f.Services[i]
		if sf.Service != RTAService || !sf.inForce(now) {
			continue
		}
		if sf.Status != 0 {
			refuse, rate = sf.Status, sf.Rate
		}
		delay = max(delay, time.Duration(sf.Latency))
	}
	return refuse, delay, rate
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
