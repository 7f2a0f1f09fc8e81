package analyze

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/xblgo/fgrl/internal/browsertest"
)

// htmlTrace is a game's evening: presence writes too fast, a small batch,
// polling, a run of 429s, and a gamertag that is markup.
func htmlTrace() trace {
	var tr trace
	tr.add(0, "GET", "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag", "1", 200).ResponseBody =
		[]byte(`{"profileUsers":[{"id":"2533274791234567","settings":[{"id":"Gamertag","value":"<script>alert(1)</script>"}]}]}`)
	for i := range 40 {
		tr.add(1+float64(i)*2, "POST", presenceWrite, "1", 200)
	}
	for i := range 3 {
		tr.add(100+float64(i*30), "GET", "https://achievements.xboxlive.com/users/xuid(1)/achievements", "2", 200)
		tr.add(101+float64(i*30), "GET", "https://achievements.xboxlive.com/users/xuid(1)/achievements", "2", 200)
	}
	for i := range 4 {
		tr.add(200+float64(i), "GET", "https://social.xboxlive.com/users/me/people", "2", 429).RetryAfter = "30"
	}
	return tr
}

func writeReport(t *testing.T) (string, *Report) {
	rep := htmlTrace().report(t)
	var buf bytes.Buffer
	if err := rep.WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(name, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return name, rep
}

// TestHTMLSelfContained: the page loads nothing from anywhere and escapes
// what the trace says.
func TestHTMLSelfContained(t *testing.T) {
	name, rep := writeReport(t)
	b, _ := os.ReadFile(name)
	page := string(b)
	if regexp.MustCompile(`(?i)\b(src|href)\s*=`).MatchString(page) || strings.Contains(page, "@import") {
		t.Error("the page links to something")
	}
	if strings.Contains(page, "<script>alert(1)") || !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("the gamertag is not escaped")
	}
	if rep.Verdict != Red || strings.Count(page, `<svg class="timeline"`) != len(rep.Groups) {
		t.Errorf("verdict %s, %d timelines for %d groups", rep.Verdict, strings.Count(page, `<svg class="timeline"`), len(rep.Groups))
	}
}

// TestHTMLInChromium renders the page in headless Chromium (Debian's
// chromium; CI installs it) and checks that it shows the verdict and the
// findings, draws every timeline, filters the findings by level, and runs
// without a script error.
func TestHTMLInChromium(t *testing.T) {
	ctx, scriptErrors := browsertest.Start(t, 60*time.Second)
	name, rep := writeReport(t)
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
	if strings.ToLower(verdict) != Red || rows != total || svgs != len(rep.Groups) || bars == 0 {
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
