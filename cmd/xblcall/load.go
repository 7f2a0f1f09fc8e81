package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"golang.org/x/time/rate"

	"github.com/xblgo/fgrl/throttle"
	"github.com/xblgo/fgrl/transport"
)

// maxLoadCalls bounds -n: every call's latency is kept for the percentiles.
const maxLoadCalls = 1_000_000

// maxLoadPace bounds how long --rate may spread a run's starts over.
const maxLoadPace = 168 * time.Hour

// loadOpts are call's load flags: -n calls, -c at a time, at most --rate a
// second, through one transport.
type loadOpts struct {
	n, c int
	rate float64
}

func (l loadOpts) on() bool { return l.n > 1 || l.c > 1 || l.rate > 0 }

func (l loadOpts) check() error {
	switch {
	case l.n < 1 || l.n > maxLoadCalls:
		return fmt.Errorf("-n must be between 1 and %d", maxLoadCalls)
	case l.c < 1 || l.c > 10_000:
		return errors.New("-c must be between 1 and 10000")
	case !(l.rate >= 0) || math.IsInf(l.rate, 0):
		return errors.New("--rate must be a finite number, not negative")
	case l.rate > 0 && float64(l.n-1)/l.rate > maxLoadPace.Seconds():
		// a run whose starts are spaced past any end (1e-300/s: a wait of
		// 1e300 s, which the rate limiter waits as forever)
		return fmt.Errorf("--rate %g starts -n %d calls over more than %v: give a higher rate or fewer calls", l.rate, l.n, maxLoadPace)
	}
	return nil
}

// loadReport is what a load run saw. It is printed as a table or, with
// --json, as this object.
type loadReport struct {
	Calls       int               `json:"calls"`     // asked for (-n)
	Completed   int               `json:"completed"` // ended: fewer than Calls when interrupted
	Interrupted bool              `json:"interrupted,omitempty"`
	Concurrency int               `json:"concurrency"`
	Rate        float64           `json:"rate,omitempty"` // calls a second asked for; 0: as fast as answered
	Elapsed     throttle.Duration `json:"elapsed"`
	Served      int               `json:"served"`         // calls that ended in an answer other than 429
	OK          int               `json:"ok"`             // of those, 2xx
	Statuses    map[string]int    `json:"statuses"`       // final status codes
	Waited      int64             `json:"waits"`          // waits before an attempt (budget or Retry-After)
	Refused     int               `json:"refusedLocally"` // calls the budget refused without an answer
	Throttled   int               `json:"throttled"`      // calls that ended in the service's 429
	Server429s  int64             `json:"server429s"`     // 429 answers received, retries included
	Retries     int64             `json:"retries"`
	Failed      int               `json:"failed"` // calls that ended in another error
	FirstError  string            `json:"firstError,omitempty"`
	// Latency is of the served calls only: a local refusal or a 429 says
	// nothing of how fast the service answers.
	Latency latencySummary `json:"servedLatency"`
}

type latencySummary struct {
	Min throttle.Duration `json:"min"`
	P50 throttle.Duration `json:"p50"`
	P90 throttle.Duration `json:"p90"`
	P99 throttle.Duration `json:"p99"`
	Max throttle.Duration `json:"max"`
}

// tally is a load run's shared state.
type tally struct {
	mu        sync.Mutex
	r         loadReport
	latencies []time.Duration
}

func (t *tally) record(d time.Duration, status int, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.r.Completed++
	var te *transport.ThrottleError
	switch {
	case err == nil:
		t.latencies = append(t.latencies, d)
		t.r.Served++
		if status >= 200 && status <= 299 {
			t.r.OK++
		}
		t.r.Statuses[strconv.Itoa(status)]++
	case errors.As(err, &te) && te.Local:
		t.r.Refused++
	case errors.As(err, &te):
		t.r.Throttled++
	default:
		t.r.Failed++
		if t.r.FirstError == "" {
			t.r.FirstError = oneLine(err)
		}
	}
}

// progress shows where the run is and what it waits for, every interval,
// until stop: on the bar's description on a terminal, as a line otherwise.
func (t *tally) progress(w io.Writer, b *bar, every time.Duration, wait func(time.Time) string) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				t.mu.Lock()
				r := t.r
				t.mu.Unlock()
				waits := wait(time.Now())
				if b != nil {
					b.describe(waits)
					continue
				}
				if waits != "" {
					waits = "; " + waits
				}
				fmt.Fprintf(w, "calls %d/%d: %d served, %d refused locally, %d throttled, %d failed%s\n",
					r.Completed, r.Calls, r.Served, r.Refused, r.Throttled, r.Failed, waits)
			}
		}
	}()
	return func() { close(done); <-finished }
}

// runLoad sends l.n copies of req through rt, l.c at a time, and reports.
// auth, when set, gives each copy its Authorization (a sign-in's current
// token).
func runLoad(ctx context.Context, e *env, t *transport.Transport, req *http.Request, body []byte,
	auth func(context.Context) (string, error), l loadOpts, asJSON bool, answer time.Duration) error {
	ctx = withSent(ctx) // the run's, which each call's adds to
	tl := &tally{r: loadReport{Calls: l.n, Concurrency: l.c, Rate: l.rate, Statuses: map[string]int{}}, latencies: make([]time.Duration, 0, l.n)}
	var lim *rate.Limiter
	if l.rate > 0 {
		lim = rate.NewLimiter(rate.Limit(l.rate), 1)
	}
	b := newBar(e.stderr, isTerminal(e.stderr), int64(l.n), "calls", "calls")
	w := new(waiting)
	t.Observe = w.observe
	snap := budgetOf(t, req)
	// a line a second for a log or a pipe, the bar's description on a terminal
	stopProgress := tl.progress(e.stderr, b, time.Second, func(now time.Time) string { return w.say(now, snap) })
	client := &http.Client{Transport: t}
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range min(l.c, l.n) {
		wg.Go(func() {
			for next.Add(1) <= int64(l.n) {
				if lim != nil && lim.Wait(ctx) != nil {
					<-ctx.Done() // Wait fails early when the next start falls past ctx's deadline
					return
				}
				if ctx.Err() != nil {
					return
				}
				status, d, err := oneCall(ctx, client, req, body, auth, answer)
				if ctx.Err() != nil && err != nil {
					return // cut short by the interrupt: not a result
				}
				tl.record(d, status, err)
				b.add()
			}
		})
	}
	wg.Wait()
	stopProgress() // before the summary is written: no line reads it meanwhile
	b.finish()
	tl.r.Interrupted = ctx.Err() != nil
	tl.r.Elapsed = throttle.Duration(time.Since(start))
	st := t.Stats()
	tl.r.Waited, tl.r.Server429s, tl.r.Retries = st.Waits, st.Server429s, st.Retries
	tl.r.Latency = summarize(tl.latencies)
	var err error
	if asJSON {
		err = printJSON(e.stdout, tl.r)
	} else {
		err = printLoad(e.stdout, &tl.r)
	}
	switch {
	case err == nil && tl.r.Interrupted:
		err = ctx.Err() // the summary so far is printed; the exit says interrupted
	case err == nil && tl.r.Failed > 0:
		err = fmt.Errorf("%d of %d calls failed; the first: %s", tl.r.Failed, l.n, tl.r.FirstError)
	}
	return err
}

// oneCall sends one copy of req and reads its answer to the end (bounded).
func oneCall(ctx context.Context, client *http.Client, req *http.Request, body []byte,
	auth func(context.Context) (string, error), answer time.Duration) (int, time.Duration, error) {
	ctx, cancel := context.WithCancel(withSent(ctx)) // ends the answer's body past answer
	defer cancel()
	r := req.Clone(ctx)
	if auth != nil {
		a, err := auth(ctx)
		if err != nil {
			return 0, 0, err
		}
		r.Header.Set("Authorization", a)
	}
	if body != nil {
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	start := time.Now()
	resp, err := client.Do(r)
	if err != nil {
		return 0, time.Since(start), clientError(r, err)
	}
	bound := bodyBound(ctx, cancel, answer)
	_, err = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<20))
	resp.Body.Close()
	return resp.StatusCode, time.Since(start), bound(err)
}

func summarize(d []time.Duration) latencySummary {
	if len(d) == 0 {
		return latencySummary{}
	}
	slices.Sort(d)
	at := func(p float64) throttle.Duration { return throttle.Duration(d[min(int(p*float64(len(d))), len(d)-1)]) }
	return latencySummary{Min: at(0), P50: at(0.50), P90: at(0.90), P99: at(0.99), Max: at(1)}
}

func printLoad(w io.Writer, r *loadReport) error {
	pace := "as fast as answered"
	if r.Rate > 0 {
		pace = fmt.Sprintf("at most %g/s", r.Rate)
	}
	if r.Interrupted {
		fmt.Fprintf(w, "interrupted: %d of %d calls ended\n", r.Completed, r.Calls)
	}
	fmt.Fprintf(w, "%d calls in %v (%.1f/s), %d at a time, %s\n", r.Completed, round(time.Duration(r.Elapsed)),
		float64(r.Completed)/max(time.Duration(r.Elapsed).Seconds(), 1e-9), r.Concurrency, pace)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "  served\t%d\tanswered (%d with 2xx)\n", r.Served, r.OK)
	fmt.Fprintf(tw, "  waited\t%d\twaits for the budget or a Retry-After before an attempt\n", r.Waited)
	fmt.Fprintf(tw, "  refused locally\t%d\tthe budget was spent: no request sent\n", r.Refused)
	fmt.Fprintf(tw, "  throttled\t%d\tended in the service's 429\n", r.Throttled)
	fmt.Fprintf(tw, "  server 429s\t%d\t429 answers received, retries included (%d retries)\n", r.Server429s, r.Retries)
	fmt.Fprintf(tw, "  failed\t%d\t%s\n", r.Failed, r.FirstError)
	if err := tw.Flush(); err != nil {
		return err
	}
	l := r.Latency
	fmt.Fprintf(w, "latency of served calls: min %v  p50 %v  p90 %v  p99 %v  max %v\n", round(time.Duration(l.Min)), round(time.Duration(l.P50)), round(time.Duration(l.P90)), round(time.Duration(l.P99)), round(time.Duration(l.Max)))
	fmt.Fprint(w, "status codes:")
	for _, c := range slices.Sorted(maps.Keys(r.Statuses)) {
		fmt.Fprintf(w, " %s x%d", c, r.Statuses[c])
	}
	_, err := fmt.Fprintln(w)
	return err
}

func round(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}
