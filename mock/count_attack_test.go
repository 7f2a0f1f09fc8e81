package mock

import (
	"testing"
	"testing/synctest"
)

// TestAttackPresenceWriteSpellingsShareOneBudget: "Every call the mock serves
// is counted before it is answered", against its user + title + scope; a
// path with empty segments "is served as the path without them, counted
// as that call". Presence writes (burst 3 in 15 s) spelt five ways, in
// case, with empty segments, me or xuid(N), with a query, are one
// caller's writes: the fourth and fifth are throttled, and every one of
// them counts under presence's write scope, none under its read scope.
// (This held on the code attacked.)
func TestAttackPresenceWriteSpellingsShareOneBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := NewHandler()
		tok := Token(xuid1, title1)
		body := `{"state":"active"}`
		paths := []string{
			"/users/me/devices/current/titles/current",
			"/USERS/ME/DEVICES/CURRENT/TITLES/CURRENT",
			"//users//me/devices/current/titles/current",
			"/users/XUID(" + xuid1 + ")/devices/current/titles/current",
			"/users/Me/devices/current/titles/current?x=1",
		}
		var statuses []int
		for _, p := range paths {
			r := do(t, h, "POST", "https://userpresence.xboxlive.com"+p, tok, body)
			statuses = append(statuses, r.status)
		}
		want := []int{200, 200, 200, 429, 429}
		for i := range want {
			if statuses[i] != want[i] {
				t.Errorf("write %d (%s): %d, want %d (all: %v)", i+1, paths[i], statuses[i], want[i], statuses)
			}
		}
		for _, c := range h.Calls(CallFilter{}) {
			if c.Scope != "presence/write" {
				t.Errorf("%s %s counted under %q, want presence/write", c.Method, c.URL, c.Scope)
			}
		}
	})
}
