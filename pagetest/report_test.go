package pagetest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/xblgo/fgrl/analyze"
	"github.com/xblgo/fgrl/limits"
)

// evening is a game's evening as a trace: presence writes too fast, polling,
// a run of 429s, and a gamertag that is markup.
func evening() []analyze.Call {
	t0 := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	var calls []analyze.Call
	add := func(s float64, method, url, user string, status int) *analyze.Call {
		calls = append(calls, analyze.Call{Time: t0.Add(time.Duration(s * float64(time.Second))), Method: method, URL: url,
			Authorization: "XBL3.0 x=" + user + ";REDACTED", Status: status})
		return &calls[len(calls)-1]
	}
	add(0, "GET", "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag", "1", 200).ResponseBody =
		[]byte(`{"profileUsers":[{"id":"2533274791234567","settings":[{"id":"Gamertag","value":"<script>alert(1)</script>"}]}]}`)
	for i := range 40 {
		add(1+float64(i)*2, "POST", "https://userpresence.xboxlive.com/users/xuid(2533274791234567)/devices/current/titles/current", "1", 200)
	}
	for i := range 3 {
		add(100+float64(i*30), "GET", "https://achievements.xboxlive.com/users/xuid(1)/achievements", "2", 200)
		add(101+float64(i*30), "GET", "https://achievements.xboxlive.com/users/xuid(1)/achievements", "2", 200)
	}
	for i := range 4 {
		add(200+float64(i), "GET", "https://social.xboxlive.com/users/me/people", "2", 429).RetryAfter = "30"
	}
	return calls
}

// TestReportInChromium renders the analyzer's HTML report in headless
// Chromium and checks that it shows the verdict and the findings, draws
// every timeline, filters the findings by level, and runs without a script
// error.
func TestReportInChromium(t *testing.T) {
	ctx, scriptErrors := Start(t, 60*time.Second)
	rep, err := analyze.Analyze(evening(), limits.Default(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := rep.WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(name, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(chromedp.Do(ctx, chromedp.Navigate("file://"+name), chromedp.WaitVisible(chromedp.CSS("#findings"))))
	verdict, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#verdict")))
	must(err)
	shownAll, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#shown")))
	must(err)
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#findings tbody tr').length`))
	must(err)
	svgs, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('svg.timeline').length`))
	must(err)
	bars, err := chromedp.Run(ctx, chromedp.Evaluate[int](
		`Array.from(document.querySelectorAll('svg.timeline rect')).filter(r => r.getBBox().height > 0).length`))
	must(err)
	must(chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`(() => { const s = document.getElementById('level');
		s.value = 'fail'; s.dispatchEvent(new Event('change')) })()`)))
	shownFail, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#shown")))
	must(err)
	total := len(rep.Findings)
	if strings.ToLower(verdict) != analyze.Red || rows != total || svgs != len(rep.Groups) || bars == 0 {
		t.Errorf("verdict %q, %d rows for %d findings, %d timelines for %d groups, %d bars", verdict, rows, total, svgs, len(rep.Groups), bars)
	}
	if want := fmt.Sprintf("%d of %d shown", total, total); shownAll != want {
		t.Errorf("shown %q, want %q", shownAll, want)
	}
	if want := fmt.Sprintf("%d of %d shown", rep.Fails, total); shownFail != want {
		t.Errorf("with level=fail: shown %q, want %q", shownFail, want)
	}
	if errs := scriptErrors(); len(errs) > 0 {
		t.Errorf("script errors: %v", errs)
	}
}
