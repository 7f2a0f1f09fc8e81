package sim

import (
	"net/http"
	"sync"
	"time"

	"github.com/xblgo/fgrl/internal/xblauth"
	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/throttle"
)

// observer is the service as the simulation sees it: the mock, with a tally
// per 15 s interval of what reached it.
type observer struct {
	h      *mock.Handler
	now    func() time.Time
	start  time.Time
	title  string
	limits *limits.Limits

	mu        sync.Mutex
	intervals map[int]*tally
	last      int
}

type tally struct {
	requests, throttled int
	burst, sustain      int // highest counts of any key
	burstHit, sustHit   bool
}

func (o *observer) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := o.h.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	user, scope := o.identify(req)
	d, _ := o.h.Counts(user, o.title, scope)
	o.mu.Lock()
	defer o.mu.Unlock()
	i := int(o.now().Sub(o.start) / throttle.BurstPeriod)
	if o.intervals == nil {
		o.intervals = map[int]*tally{}
	}
	t := o.intervals[i]
	if t == nil {
		t = &tally{}
		o.intervals[i] = t
	}
	o.last = max(o.last, i)
	t.requests++
	t.burst = max(t.burst, d.Burst.Count)
	t.sustain = max(t.sustain, d.Sustain.Count)
	if resp.StatusCode == http.StatusTooManyRequests {
		t.throttled++
		t.burstHit = t.burstHit || (d.Burst.Limit > 0 && d.Burst.Count > d.Burst.Limit)
		t.sustHit = t.sustHit || (d.Sustain.Limit > 0 && d.Sustain.Count > d.Sustain.Limit)
	}
	return resp, nil
}

// identify returns the user (the token's userhash, as every key names it)
// and scope of a request.
func (o *observer) identify(req *http.Request) (string, string) {
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	r, ok := o.limits.Match(req.Method, host, req.URL.Path)
	if !ok {
		return "", ""
	}
	uhs, _, _ := xblauth.Parse(req.Header.Get("Authorization"))
	return uhs, r.Scope()
}

// rows returns the per-interval table, idle runs collapsed into one row, and
// the total of 429s.
func (o *observer) rows() ([]Row, int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	secs := int(throttle.BurstPeriod / time.Second)
	var rows []Row
	total, sustain := 0, 0
	for i := 0; i <= o.last && len(o.intervals) > 0; i++ {
		t := o.intervals[i]
		if t == nil {
			if n := len(rows); n > 0 && rows[n-1].Requests == 0 {
				rows[n-1].End = (i + 1) * secs
				continue
			}
			rows = append(rows, Row{Start: i * secs, End: (i + 1) * secs, SustainCount: sustain, Limit: "-"})
			continue
		}
		total += t.throttled
		sustain = t.sustain
		rows = append(rows, Row{Start: i * secs, End: (i + 1) * secs, Requests: t.requests, BurstCount: t.burst,
			SustainCount: t.sustain, Throttled: t.throttled, Limit: limitName(t)})
	}
	return rows, total
}

func limitName(t *tally) string {
	switch {
	case t.throttled == 0:
		return "-"
	case t.burstHit && t.sustHit:
		return "both"
	case t.burstHit:
		return "burst"
	case t.sustHit:
		return "sustain"
	}
	return "-"
}
