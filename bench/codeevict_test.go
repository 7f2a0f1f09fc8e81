package bench

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"text/template"
	"time"
)

var (
	evictRE   = regexp.MustCompile(`^/users/(xuid\((\d+)\)|me)/profile/settings$`)
	evictTmpl = template.Must(template.New("t").Parse(`{{range .}}{{.Name}}={{printf "%08.3f" .Value}};{{end}}`))
)

type evictItem struct {
	Name  string            `json:"name"`
	Value float64           `json:"value"`
	When  time.Time         `json:"when"`
	Tags  map[string]string `json:"tags"`
}

// evictCode runs a spread of the standard library's code (JSON both ways,
// fmt, a template, a regular expression, URL parsing, time formatting), as
// a program does between two calls, so that the call's own instructions
// are no longer in the core's instruction cache (BenchmarkColdCall
// -evictcode). It returns a value so that no work is optimised away.
func evictCode() int {
	items := []evictItem{{Name: "a", Value: 1.5, When: time.Unix(1e9, 0).UTC(), Tags: map[string]string{"k": "v"}}, {Name: "b", Value: -2e10}}
	b, _ := json.Marshal(items)
	var back []evictItem
	_ = json.Unmarshal(b, &back)
	var sb strings.Builder
	_ = evictTmpl.Execute(&sb, back)
	u, _ := url.Parse("https://profile.xboxlive.com/users/xuid(2533274791234567)/profile/settings?settings=Gamertag,GameDisplayPicRaw")
	m := evictRE.FindStringSubmatch(u.Path)
	s := fmt.Sprintf("%v %q %x %e %s", m, u.Query().Get("settings"), len(b), 3.25, time.Unix(1e9, 0).UTC().Format(time.RFC1123))
	n, _ := strconv.ParseFloat("6.02e23", 64)
	return len(s) + sb.Len() + int(n)%7
}
