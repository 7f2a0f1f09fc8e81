package analyze

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
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
