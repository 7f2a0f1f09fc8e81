package main

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestWatchTakesTheTokenOutOfEvents: an RTA service that echoes the token
// it was given in what an event carries (the presence's state, a title
// presence's title, a device) never gets it printed, in text or --json
// (watch --help: "Tokens are never printed: each the client was given ...
// is taken out of every line").
func TestWatchTakesTheTokenOutOfEvents(t *testing.T) {
	t.Parallel() // its own servers; no environment or package variable
	secret := attack11Secret()
	for _, asJSON := range []bool{false, true} {
		srv := httptest.NewServer(&attack11RTA{answer: func(_ int, seq int, uri string) []string {
			if strings.HasSuffix(uri, "/devices") {
				return []string{fmt.Sprintf(`[1,%d,0,%d,{"xuid":%q,"state":"Online %s","devices":[{"type":"%s","titles":[{"id":"1","name":"x %s","state":"Active"}]}]}]`, seq, 100+seq, attack11Other, secret, secret, secret)}
			}
			return []string{fmt.Sprintf(`[1,%d,0,%d,{"xuid":%q,"state":"%s"}]`, seq, 100+seq, attack11Other, secret)}
		}})
		args := []string{"--events", "2", "--for", "5s"}
		if asJSON {
			args = append(args, "--json")
		}
		code, out, errs, _ := attack11Watch(t, context.Background(), srv.URL, attack11Other, args...)
		srv.Close()
		if code != 0 || !strings.Contains(out, "subscribed") {
			t.Fatalf("json %v: exit %d, stdout %q stderr %q; want 0 and two subscribed lines", asJSON, code, out, errs)
		}
		if strings.Contains(out, secret) || strings.Contains(errs, secret) {
			t.Errorf("json %v: the token the client was given is printed: stdout %q stderr %q", asJSON, strings.ReplaceAll(out, secret, "<TOKEN>"), strings.ReplaceAll(errs, secret, "<TOKEN>"))
		}
	}
}
