package main

import (
	"bytes"
	"cmp"
	"fmt"
	"html"
	"time"

	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/replay"
	"github.com/xblgo/fgrl/throttle"
)

// The chart's geometry, in SVG pixels.
const (
	chartWidth  = 960
	plotLeft    = 70  // room for the y ticks
	plotRight   = 130 // room for the limits' labels
	plotHeight  = 110
	keyHeader   = 40 // a key's title and its summary line
	axisSpace   = 34 // x tick labels and the axis title under a plot
	legendSpace = 56 // the description and the legend at the top
	maxBuckets  = 240
	// chartKeysPerClient bounds the keys drawn per client; the rest are
	// named in one line (the tables and --json have them all).
	chartKeysPerClient = 4
)

// writeSVG draws one panel per client and key (user + service), each with
// its own limits: the requests per 15 s interval against the burst limit
// (served green, throttled red), and the key's sustain count against the
// sustain limit as a step line that drops where a window resets. Long runs
// are aggregated into at most 240 buckets, each showing its busiest
// interval, so a 24-hour pattern stays readable.
// svgText is s as an SVG text node's content: control characters and
// invalid UTF-8, which XML does not take even as references, escaped
// Go-style (safetext), then the markup.
func svgText(s string) string { return html.EscapeString(safetext.Clip(s, 1000)) }

func writeSVG(name string, results []replay.Result, desc string) error {
	c := chart{end: int(throttle.BurstPeriod / time.Second)}
	for _, r := range results {
		for _, k := range r.Keys {
			if n := len(k.Rows); n > 0 {
				c.end = max(c.end, k.Rows[n-1].End)
			}
		}
	}
	c.header(desc)
	for _, r := range results {
		for i, k := range r.Keys {
			if i == chartKeysPerClient {
				c.note(fmt.Sprintf("client %s: %d more keys not drawn (see the tables or --json)", r.Client, len(r.Keys)-i))
				break
			}
			c.key(r.Client, k)
		}
	}
	f, err := createOutput(name)
	if err != nil {
		return err
	}
	_, err = f.Write(c.finish())
	return cmp.Or(err, f.Close())
}

// chart accumulates the SVG body; y is the height used so far and end the
// seconds every panel's time axis covers.
type chart struct {
	body bytes.Buffer
	y    int
	end  int
}

func (c *chart) printf(format string, args ...any) { fmt.Fprintf(&c.body, format+"\n", args...) }

func (c *chart) header(desc string) {
	c.printf(`<text x="10" y="20" font-size="14">%s</text>`, svgText(desc))
	y := 40
	c.printf(`<rect x="10" y="%d" width="14" height="10" fill="seagreen"/><text x="30" y="%d">served</text>`, y-9, y)
	c.printf(`<rect x="100" y="%d" width="14" height="10" fill="crimson"/><text x="120" y="%d">throttled (429)</text>`, y-9, y)
	c.printf(`<line x1="240" y1="%d" x2="262" y2="%d" stroke="steelblue" stroke-width="2"/><text x="268" y="%d">sustain count (after each interval's last request)</text>`, y-4, y-4, y)
	c.printf(`<line x1="570" y1="%d" x2="592" y2="%d" stroke="dimgray" stroke-dasharray="4 3"/><text x="598" y="%d">limit</text>`, y-4, y-4, y)
	c.y = legendSpace
}

func (c *chart) note(s string) {
	c.printf(`<text x="10" y="%d" fill="dimgray">%s</text>`, c.y+16, svgText(s))
	c.y += 26
}

func (c *chart) finish() []byte {
	var out bytes.Buffer
	fmt.Fprintf(&out, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		chartWidth, c.y+10, chartWidth, c.y+10)
	fmt.Fprintf(&out, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	out.Write(c.body.Bytes())
	out.WriteString("</svg>\n")
	return out.Bytes()
}

// key draws one key's panel: its title, then the burst plot and the
// sustain plot over the same time axis.
func (c *chart) key(client string, k replay.KeyResult) {
	b := bucketize(k, c.end)
	throttled := 0
	for _, r := range k.Rows {
		throttled += r.Throttled
	}
	c.printf(`<text x="10" y="%d" font-weight="bold">client %s, user %s, %s</text>`, c.y+16, svgText(client), svgText(k.User), svgText(k.Scope))
	c.printf(`<text x="10" y="%d" fill="dimgray">%d requests reached the service, %d throttled; burst %d / 15 s, sustain %d / 300 s</text>`,
		c.y+32, k.Requests, throttled, k.Burst, k.Sustain)
	c.y += keyHeader
	per, sust := "requests per 15 s", "sustain count"
	if b.size > 1 {
		each := span(time.Duration(b.size) * throttle.BurstPeriod)
		per, sust = "requests in the busiest 15 s of each "+each, "highest sustain count of each "+each
	}
	c.plot(b, plotSpec{title: per, limit: k.Burst, label: "burst", bars: true})
	c.plot(b, plotSpec{title: sust, limit: k.Sustain, label: "sustain"})
}

// buckets is a key's intervals grouped for drawing: each bucket keeps its
// busiest interval (for the bars) and its highest sustain count.
type buckets struct {
	size int // intervals per bucket
	end  int // seconds on the time axis
	peak []replay.Row
	sust []int // up to the key's last interval: after it, its count is unknown
}

func bucketize(k replay.KeyResult, end int) buckets {
	secs := int(throttle.BurstPeriod / time.Second)
	intervals := (end + secs - 1) / secs
	size := 1
	for intervals/size > maxBuckets {
		size *= 2
	}
	n := (intervals + size - 1) / size
	last := 0
	if len(k.Rows) > 0 {
		last = min((k.Rows[len(k.Rows)-1].End/secs+size-1)/size, n)
	}
	b := buckets{size: size, end: n * size * secs, peak: make([]replay.Row, n), sust: make([]int, last)}
	for _, r := range k.Rows {
		lo, hi := r.Start/secs/size, (r.End/secs-1)/size
		if lo >= n {
			break
		}
		for i := lo; i <= hi && i < len(b.sust); i++ {
			b.sust[i] = max(b.sust[i], r.SustainCount)
		}
		if p := b.peak[lo]; r.Requests > p.Requests || r.Requests == p.Requests && r.Throttled > p.Throttled {
			b.peak[lo] = r
		}
	}
	return b
}

type plotSpec struct {
	title, label string
	limit        int
	bars         bool
}

// plot draws one plot with its axes, ticks, limit and data.
func (c *chart) plot(b buckets, s plotSpec) {
	top := c.y + 18
	w := chartWidth - plotLeft - plotRight
	peak := max(s.limit, 1)
	if s.bars {
		for i := range b.peak {
			peak = max(peak, b.peak[i].Requests)
		}
	} else {
		for _, n := range b.sust {
			peak = max(peak, n)
		}
	}
	yStep := niceStep(peak, 4)
	yMax := (peak + yStep - 1) / yStep * yStep
	bw := float64(w) / float64(len(b.peak))
	sx := func(i int) float64 { return float64(plotLeft) + float64(i)*bw }
	sy := func(n int) float64 { return float64(top+plotHeight) - float64(n)*float64(plotHeight)/float64(yMax) }
	c.axes(top, w, yMax, yStep, s.title, b)
	if s.bars {
		for i, r := range b.peak {
			if r.Requests == 0 {
				continue
			}
			served := r.Requests - r.Throttled
			c.printf(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="seagreen"/>`, sx(i), sy(served), max(bw-1, 0.5), sy(0)-sy(served))
			if r.Throttled > 0 {
				c.printf(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="crimson"/>`, sx(i), sy(r.Requests), max(bw-1, 0.5), sy(served)-sy(r.Requests))
			}
		}
	} else {
		c.steps(b.sust, sx, sy)
	}
	if s.limit > 0 {
		c.printf(`<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="dimgray" stroke-dasharray="4 3"/>`, plotLeft, sy(s.limit), plotLeft+w, sy(s.limit))
		c.printf(`<text x="%d" y="%.1f" fill="dimgray">%s limit %d</text>`, plotLeft+w+6, sy(s.limit)+4, s.label, s.limit)
	}
	c.y = top + plotHeight + axisSpace
}

// steps draws v as a step line: level across each bucket, vertical where
// it changes, so a window reset is a drop, not a slope.
func (c *chart) steps(v []int, sx func(int) float64, sy func(int) float64) {
	var pts bytes.Buffer
	for i, n := range v {
		fmt.Fprintf(&pts, "%.1f,%.1f %.1f,%.1f ", sx(i), sy(n), sx(i+1), sy(n))
	}
	c.printf(`<polyline points="%s" fill="none" stroke="steelblue" stroke-width="2"/>`, bytes.TrimSpace(pts.Bytes()))
}

// axes draws a plot's frame, y ticks and x ticks with time units.
func (c *chart) axes(top, w, yMax, yStep int, title string, b buckets) {
	bottom := top + plotHeight
	c.printf(`<text x="%d" y="%d" fill="dimgray">%s</text>`, plotLeft, top-6, svgText(title))
	c.printf(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`, plotLeft, top, plotLeft, bottom)
	c.printf(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`, plotLeft, bottom, plotLeft+w, bottom)
	for n := 0; n <= yMax; n += yStep {
		y := float64(bottom) - float64(n)*float64(plotHeight)/float64(yMax)
		c.printf(`<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" text-anchor="end">%d</text>`,
			plotLeft, y, plotLeft+w, y, plotLeft-6, y+4, n)
	}
	secs := niceStep(b.end, 8, timeSteps...)
	for s := 0; s <= b.end; s += secs {
		x := float64(plotLeft) + float64(s)*float64(w)/float64(b.end)
		c.printf(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="black"/><text x="%.1f" y="%d" text-anchor="middle">%s</text>`,
			x, bottom, x, bottom+4, x, bottom+16, span(time.Duration(s)*time.Second))
	}
	c.printf(`<text x="%d" y="%d" text-anchor="end" fill="dimgray">time since the first call</text>`, plotLeft+w, bottom+30)
}

// timeSteps are the x tick steps in seconds: round seconds, minutes, hours
// and days.
var timeSteps = []int{1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 2 * 86400, 7 * 86400, 14 * 86400, 30 * 86400}

// niceStep returns a tick step giving at most n ticks over [0, v]: one of
// steps when one fits, else 1, 2 or 5 times a power of ten (for counts, pass
// no steps).
func niceStep(v, n int, steps ...int) int {
	for _, s := range steps {
		if v/s <= n {
			return s
		}
	}
	for p := 1; ; p *= 10 {
		for _, m := range []int{1, 2, 5} {
			if v/(m*p) <= n {
				return m * p
			}
		}
		if p > v/10 { // the next power would pass v (and could overflow)
			return max(v, 1)
		}
	}
}

// span formats a tick or bucket length compactly: 45s, 5m, 1h30m, 2d.
func span(d time.Duration) string {
	switch {
	case d == 0:
		return "0"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		if d%time.Minute == 0 {
			return fmt.Sprintf("%dm", int(d/time.Minute))
		}
		return fmt.Sprintf("%dm%ds", int(d/time.Minute), int(d%time.Minute/time.Second))
	case d < 48*time.Hour:
		if d%time.Hour == 0 {
			return fmt.Sprintf("%dh", int(d/time.Hour))
		}
		return fmt.Sprintf("%dh%dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
	}
	return fmt.Sprintf("%dd", int(d/(24*time.Hour)))
}
