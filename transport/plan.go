package transport

import (
	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/throttle"
)

// PlanClient is how t admits calls of priority p, for the poll planner
// (limits.Limits.PlanFor, xblcall limits plan): its budget's margin (the
// private and fallback budgets'; a shared Budget keeps its own), its
// LimitShare and, for Background calls, the limits less the share kept for
// interactive ones. A periodic call at the plan's Fastest interval is
// sent at once every tick: t delays and refuses none of it, while nothing
// else spends the key's budget.
func (t *Transport) PlanClient(p Priority) limits.PlanClient {
	return limits.PlanClient{
		Margin: throttle.MarginOr(t.Margin),
		Limit: func(l throttle.Limit) throttle.Limit {
			l = t.share(l)
			if p == Background {
				l = t.backgroundLimit(l)
			}
			return l
		},
	}
}
