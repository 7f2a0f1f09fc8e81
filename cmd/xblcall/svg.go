package main

import (
	"fmt"
	"html"
	"os"
	"strings"

	"github.com/xblgo/fgrl/internal/sim"
)

// writeSVG draws, for each client, the requests the service saw per 15 s
// interval (served in green, throttled in red) and the sustain count over
// time against the highest limit reached.
func writeSVG(name string, results []sim.Result, desc string) error {
	const w, ph, gap = 900, 220, 40
	var b strings.Builder
	h := gap + len(results)*(ph+gap)
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", w, h)
	fmt.Fprintf(&b, `<text x="10" y="20">%s</text>`+"\n", html.EscapeString(desc))
	for i, r := range results {
		panel(&b, r, 10, gap+i*(ph+gap), w-20, ph)
	}
	b.WriteString("</svg>\n")
	return os.WriteFile(name, []byte(b.String()), 0o644)
}

func panel(b *strings.Builder, r sim.Result, x, y, w, h int) {
	end, peak := 1, 1
	for _, row := range r.Rows {
		end = max(end, row.End)
		peak = max(peak, row.Requests, row.SustainCount)
	}
	peak = max(peak, r.BurstLimit, r.SustainLimit)
	sx := func(s int) float64 { return float64(x) + float64(s)*float64(w)/float64(end) }
	sy := func(n int) float64 { return float64(y+h) - float64(n)*float64(h-20)/float64(peak) }
	fmt.Fprintf(b, `<text x="%d" y="%d">client %s: served %d, server 429s %d, refused locally %d (bars: requests per 15 s; line: sustain count)</text>`+"\n",
		x, y+12, r.Client, r.Served, r.Server429s, r.Refused)
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", x, y+h, x+w, y+h)
	var line []string
	for _, row := range r.Rows {
		if row.Requests > 0 {
			served := row.Requests - row.Throttled
			fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="seagreen"/>`+"\n",
				sx(row.Start), sy(served), sx(row.End)-sx(row.Start)-1, sy(0)-sy(served))
			fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="crimson"/>`+"\n",
				sx(row.Start), sy(row.Requests), sx(row.End)-sx(row.Start)-1, sy(served)-sy(row.Requests))
		}
		line = append(line, fmt.Sprintf("%.1f,%.1f", sx(row.End), sy(row.SustainCount)))
	}
	for _, l := range []struct {
		n     int
		label string
	}{{r.BurstLimit, "burst limit"}, {r.SustainLimit, "sustain limit"}} {
		if l.n > 0 {
			fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="gray" stroke-dasharray="4 3"/>`+"\n", x, sy(l.n), x+w, sy(l.n))
			fmt.Fprintf(b, `<text x="%d" y="%.1f" fill="gray">%s %d</text>`+"\n", x+w-110, sy(l.n)-3, l.label, l.n)
		}
	}
	if len(line) > 0 {
		fmt.Fprintf(b, `<polyline points="%s" fill="none" stroke="steelblue" stroke-width="2"/>`+"\n", strings.Join(line, " "))
	}
}
