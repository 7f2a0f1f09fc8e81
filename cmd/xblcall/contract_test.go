package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestCallContractIsTheTables: for each call of docs/CLIENT.md's table, the
// x-xbl-contract-version that call -v prints for its request (with no -H
// naming one) is the table's. Before, call sent 1 to every host, so -v
// printed 1 for profile settings where the table says 2.
func TestCallContractIsTheTables(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/CLIENT.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| ([A-Za-z, ]+) \\| `(\\S+) (\\S+) ([^`]+)` \\| ([0-9.]+) \\|")
	// A value for each placeholder of the table's paths.
	fill := strings.NewReplacer("xuid(N)", "xuid(2533274791234567)", "xuid(M)", "xuid(2533274791234568)", "{scid}", "00000000-0000-0000-0000-0000499602d2",
		"{t}", "tmpl", "{name}", "s1", "{hopper}", "h1", "{id}", "1", "{a,b}", "a,b", "gt(G)", "gt(MockPlayer)", "titleid(T)", "titleid(1234567890)",
		"stat({name})", "stat(kills)")
	rows := row.FindAllStringSubmatch(string(doc), -1)
	if len(rows) < 20 {
		t.Fatalf("read %d rows of docs/CLIENT.md's table; the test reads too few", len(rows))
	}
	for _, m := range rows {
		name, method, service, path, want := m[1], m[2], m[3], m[4], m[5]
		t.Run(name, func(t *testing.T) {
			method, _, _ = strings.Cut(method, "`/`") // GET/PUT: the first
			path = fill.Replace(strings.ReplaceAll(path, "stat({name})", "stat(kills)"))
			path, query, _ := strings.Cut(path, "?")
			url := "https://" + service + ".xboxlive.com" + path
			if query != "" {
				url += "?" + query
			}
			args := []string{"call", "--mock", "-v", "-X", method, url}
			if method != "GET" {
				args = append(args, "-d", "{}")
			}
			_, _, stderr := xblcall(t, args...)
			got := regexp.MustCompile(`(?m)^> X-Xbl-Contract-Version: (\S+)$`).FindStringSubmatch(stderr)
			if got == nil {
				t.Fatalf("call -v printed no contract version:\n%s", stderr)
			}
			if got[1] != want {
				t.Errorf("call -v %s %s: contract version %s, docs/CLIENT.md says %s", method, url, got[1], want)
			}
		})
	}
}
