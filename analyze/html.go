package analyze

import (
	"fmt"
	"html/template"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// htmlGroups bounds the timelines the page draws (the busiest groups); the
// table lists every group.
const htmlGroups = 40

// WriteHTML writes the report as one self-contained HTML page: no network,
// no external file. It shows the verdict, a timeline per user and service
// with its limits drawn on it, and the findings as a table that can be
// filtered by level and rule, saying how many more were counted but not
// listed. A trace not read whole is a banner at the top, naming where.
// Text from the traces is escaped.
func (r *Report) WriteHTML(w io.Writer) error {
	return pageTemplate.Execute(w, r.page())
}

type page struct {
	R         *Report
	Gaps      []gapView // the traces not read whole
	Groups    []timelineView
	MoreDrawn int
	Rules     []string
	Unlisted  string // the findings counted but not listed, when there are
}

type gapView struct {
	Name, Where, Stop string // Stop: where reading stopped, after problems
	More              int    // problems after the first
}

type timelineView struct {
	G                     Group
	Width, Height         int
	SVGWidth, SVGHeight   int
	Bars, Throttled       []rect
	LimitY                float64 // the burst limit's line, when bars are 15 s
	HasLimit              bool
	Marks                 []mark
	Ticks                 []tick
	YMax                  int
	BucketText, LimitText string
}

type rect struct{ X, Y, W, H float64 }

type mark struct {
	X     float64
	Level string
	Title string
}

type tick struct {
	X             float64
	Y, Y4, YLabel int // the axis, the tick's end, the label's baseline
	Label         string
}

const (
	tlWidth, tlHeight, tlLeft = 900, 120, 40
)

func (r *Report) page() page {
	p := page{R: r}
	p.Rules = slices.Sorted(maps.Keys(r.ByRule))
	var unlisted, fails int
	for _, rule := range p.Rules {
		n, f := r.unlisted(rule)
		unlisted, fails = unlisted+n, fails+f
	}
	if unlisted > 0 {
		p.Unlisted = unlistedText(unlisted, fails) + "."
	}
	for _, in := range r.Inputs {
		if gap := in.Gap(); gap != nil {
			v := gapView{Name: in.Name, Where: gap.String(), More: max(in.ProblemCount-1, 0)}
			if in.Stop != nil && in.ProblemCount > 0 {
				v.Stop = in.Stop.String()
			}
			p.Gaps = append(p.Gaps, v)
		}
	}
	for i, g := range r.Groups {
		if i == htmlGroups {
			p.MoreDrawn = len(r.Groups) - i
			break
		}
		p.Groups = append(p.Groups, r.timelineView(g))
	}
	return p
}

func (r *Report) timelineView(g Group) timelineView {
	v := timelineView{G: g, Width: tlWidth, Height: tlHeight, SVGWidth: tlWidth + 30, SVGHeight: tlHeight + 32}
	n := max(len(g.Timeline), 1)
	peak := 1
	for _, c := range g.Timeline {
		peak = max(peak, c)
	}
	v.HasLimit = time.Duration(g.Bucket) == 15*time.Second && g.Burst > 0
	if v.HasLimit {
		peak = max(peak, g.Burst)
	}
	v.YMax = peak
	plotW := float64(tlWidth - tlLeft - 10)
	bw := plotW / float64(n)
	sy := func(c int) float64 { return float64(tlHeight-20) * float64(c) / float64(peak) }
	for i, c := range g.Timeline {
		if c == 0 {
			continue
		}
		x := tlLeft + float64(i)*bw
		h := sy(c)
		v.Bars = append(v.Bars, rect{x, float64(tlHeight) - h, max(bw-0.5, 0.5), h})
		if t := g.Throttled[i]; t > 0 {
			th := sy(t)
			v.Throttled = append(v.Throttled, rect{x, float64(tlHeight) - th, max(bw-0.5, 0.5), th})
		}
	}
	if v.HasLimit {
		v.LimitY = float64(tlHeight) - sy(g.Burst)
	}
	span := r.End.Sub(r.Start)
	sx := func(t time.Time) float64 {
		if span <= 0 {
			return tlLeft
		}
		return tlLeft + plotW*float64(t.Sub(r.Start))/float64(time.Duration(n)*time.Duration(g.Bucket))
	}
	for _, f := range r.Findings {
		if f.Service == g.Service && f.User == g.User && len(v.Marks) < 200 {
			v.Marks = append(v.Marks, mark{sx(f.Time), f.Level, f.Rule + ": " + f.Reason})
		}
	}
	total := time.Duration(n) * time.Duration(g.Bucket)
	step := niceDuration(total / 6)
	for d := time.Duration(0); d <= total; d += step {
		v.Ticks = append(v.Ticks, tick{sx(r.Start.Add(d)), tlHeight, tlHeight + 4, tlHeight + 16, "+" + d.String()})
	}
	v.BucketText = fmt.Sprintf("calls per %v", time.Duration(g.Bucket))
	v.LimitText = fmt.Sprintf("burst %d / 15 s, sustain %d / 300 s, certification %d / 300 s", g.Burst, g.Sustain, g.Certification)
	return v
}

// niceDuration rounds d up to a readable tick step.
func niceDuration(d time.Duration) time.Duration {
	for _, s := range []time.Duration{time.Second, 5 * time.Second, 15 * time.Second, 30 * time.Second, time.Minute,
		5 * time.Minute, 15 * time.Minute, 30 * time.Minute, time.Hour, 3 * time.Hour, 6 * time.Hour, 24 * time.Hour} {
		if d <= s {
			return s
		}
	}
	return d.Round(24 * time.Hour)
}

var pageTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"time": func(t time.Time) string { return t.Format("2006-01-02 15:04:05.000") },
	"f1":   func(f float64) string { return fmt.Sprintf("%.1f", f) },
	"dur":  func(d throttle.Duration) string { return time.Duration(d).Round(time.Millisecond).String() },
	"span": func(a, b time.Time) string { return b.Sub(a).Round(time.Millisecond).String() },
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>Trace analysis: {{.R.Verdict}}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}
.verdict{display:inline-block;padding:4px 12px;border-radius:4px;color:#fff;font-weight:bold;text-transform:uppercase}
.red{background:#c0392b}.yellow{background:#d4a017}.green{background:#2e8b57}.incomplete{background:#444}
.banner{border:2px solid #c0392b;background:#fdecea;padding:8px 12px;border-radius:4px}
table{border-collapse:collapse;margin:8px 0;width:100%}td{overflow-wrap:anywhere}td,th{border-bottom:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f4f4f4}td:nth-child(3){white-space:nowrap}td.n{text-align:right}tr.fail td.level{color:#c0392b;font-weight:bold}tr.warn td.level{color:#b07d00}
svg{display:block;margin:4px 0 16px}h2{margin-top:28px}.muted{color:#666}
</style></head><body>
<h1>Trace analysis <span class="verdict {{.R.Verdict}}" id="verdict">{{.R.Verdict}}</span></h1>
{{if .Gaps}}<div class="banner" id="incomplete"><b>Not read whole:</b> the calls read are judged below, but what was not read may fail, so the verdict is incomplete.<ul>
{{range .Gaps}}<li>{{.Name}}: {{.Where}}{{if .More}}; {{.More}} more entries not read as calls{{end}}{{if .Stop}}; reading stopped at {{.Stop}}{{end}}</li>{{end}}</ul></div>{{end}}
<p id="summary">{{.R.Fails}} failures, {{.R.Warnings}} warnings. {{.R.Calls}} calls read, {{.R.Judged}} judged in {{len .R.Groups}} user and service groups; limits {{.R.Limits}}; from {{time .R.Start}} to {{time .R.End}} UTC.</p>
<p class="muted">Red: a finding fails (a 300 s span at the certification figure, 429s in a row, calls before Retry-After passed). Yellow: warnings only. Green: no finding. Incomplete: a trace was not read whole.</p>
<ul>{{range .R.Inputs}}<li>{{.Name}}: {{.Calls}} calls{{if .ProblemCount}}, {{.ProblemCount}} entries skipped{{end}}{{if .Truncated}}, <b>read in part</b>: {{.Truncated}}{{end}}</li>{{end}}
{{if .R.NotJudged}}<li>Not judged (no rule of the limits covers the host): {{range $i, $h := .R.NotJudged}}{{if $i}}, {{end}}{{$h.Host}} {{$h.Calls}}{{if $h.Server429s}} ({{$h.Server429s}} answered 429){{end}}{{end}}</li>{{end}}
{{if .R.NoToken}}<li>Without a token: {{range $i, $h := .R.NoToken}}{{if $i}}, {{end}}{{$h.Host}} {{$h.Calls}}{{end}}</li>{{end}}</ul>

<h2>Timelines</h2>
<p class="muted">Bars: calls per bucket (red: answered 429). Dashed: the burst limit, when a bar is 15 s. Triangles: findings (red fails, amber warns); hover for the reason.</p>
{{range .Groups}}<h3>{{.G.Service}}, {{.G.User}}</h3><p class="muted">{{.LimitText}}; {{.BucketText}}</p>
<svg class="timeline" width="{{.SVGWidth}}" height="{{.SVGHeight}}" viewBox="0 -12 {{.SVGWidth}} {{.SVGHeight}}" role="img" aria-label="timeline">
<line x1="40" y1="{{.Height}}" x2="{{.Width}}" y2="{{.Height}}" stroke="#000"/><line x1="40" y1="0" x2="40" y2="{{.Height}}" stroke="#000"/>
<text x="34" y="10" text-anchor="end" font-size="10">{{.YMax}}</text><text x="34" y="{{.Height}}" text-anchor="end" font-size="10">0</text>
{{range .Bars}}<rect x="{{f1 .X}}" y="{{f1 .Y}}" width="{{f1 .W}}" height="{{f1 .H}}" fill="#5b8db8"/>{{end}}
{{range .Throttled}}<rect x="{{f1 .X}}" y="{{f1 .Y}}" width="{{f1 .W}}" height="{{f1 .H}}" fill="#c0392b"/>{{end}}
{{range .Ticks}}<line x1="{{f1 .X}}" y1="{{.Y}}" x2="{{f1 .X}}" y2="{{.Y4}}" stroke="#000"/><text x="{{f1 .X}}" y="{{.YLabel}}" text-anchor="middle" font-size="10">{{.Label}}</text>{{end}}
{{if .HasLimit}}<line x1="40" y1="{{f1 .LimitY}}" x2="{{.Width}}" y2="{{f1 .LimitY}}" stroke="#555" stroke-dasharray="4 3"/>{{end}}
{{range .Marks}}<path d="M{{f1 .X}} -10 l-4 -0 l4 8 l4 -8 z" fill="{{if eq .Level "fail"}}#c0392b{{else}}#d4a017{{end}}"><title>{{.Title}}</title></path>{{end}}
</svg>{{end}}
{{if .MoreDrawn}}<p class="muted">{{.MoreDrawn}} more groups are in the table, not drawn.</p>{{end}}
<h2>Findings</h2>
<p>Level <select id="level"><option value="">all</option><option value="fail">fail</option><option value="warn">warn</option></select>
Rule <select id="rule"><option value="">all</option>{{range .Rules}}<option>{{.}}</option>{{end}}</select>
<span id="shown" class="muted"></span></p>
<table id="findings"><thead><tr><th>Time (UTC)</th><th>Level</th><th>Rule</th><th>Service</th><th>User</th><th>Reason</th><th>Calls</th></tr></thead><tbody>
{{range .R.Findings}}<tr class="{{.Level}}" data-level="{{.Level}}" data-rule="{{.Rule}}"><td>{{time .Time}}</td><td class="level">{{.Level}}</td><td>{{.Rule}}</td><td>{{if .Service}}{{.Service}}{{else}}{{.Host}}{{end}}</td><td>{{.User}}</td><td>{{.Reason}}{{if .URL}}<br><span class="muted">{{.URL}}</span>{{end}}</td><td class="n">{{.Calls}}</td></tr>
{{end}}</tbody></table>
{{if .Unlisted}}<p class="muted" id="unlisted">{{.Unlisted}}</p>{{end}}

<h2>Groups</h2>
<table><thead><tr><th>Service</th><th>User</th><th>Calls</th><th>Peak 15 s</th><th>Peak 300 s</th><th>Cert.</th><th>429s</th><th>Avg gap</th><th>Min gap</th><th>Duplicates</th><th>Span</th><th>Verdict</th></tr></thead><tbody>
{{range .R.Groups}}<tr><td>{{.Service}}</td><td>{{.User}}</td><td class="n">{{.Calls}}</td><td class="n">{{.PeakBurst}}/{{.Burst}}</td><td class="n">{{.PeakSustain}}/{{.Sustain}}</td><td class="n">{{.Certification}}</td><td class="n">{{.Server429s}}</td><td class="n">{{dur .AvgGap}}</td><td class="n">{{dur .MinGap}}</td><td class="n">{{.Duplicates}}</td><td class="n">{{span .First .Last}}</td><td><span class="verdict {{.Verdict}}">{{.Verdict}}</span></td></tr>
{{end}}</tbody></table>

<script>
(function () {
  var level = document.getElementById('level'), rule = document.getElementById('rule');
  var rows = document.querySelectorAll('#findings tbody tr'), shown = document.getElementById('shown');
  function filter() {
    var n = 0;
    rows.forEach(function (tr) {
      var ok = (!level.value || tr.dataset.level === level.value) && (!rule.value || tr.dataset.rule === rule.value);
      tr.style.display = ok ? '' : 'none';
      if (ok) n++;
    });
    shown.textContent = n + ' of ' + rows.length + ' shown';
  }
  level.addEventListener('change', filter);
  rule.addEventListener('change', filter);
  filter();
})();
</script>
</body></html>
`))
