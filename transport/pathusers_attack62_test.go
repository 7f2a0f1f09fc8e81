package transport

import (
	"net/http"
	"strings"
	"testing"
)

// Event: "It names the service, never the user: no userhash, token or
// XUID." A service that quotes the path it refused (the user it names by
// xuid(…), gt(…) or gamertag(…)) has that user taken out of the 429's text,
// short gamertags included (fgrlotel.TestAttack62SpanNoPathXUID drives it
// through spans and Observe).
func TestAttack62PathUsersScrubbed(t *testing.T) {
	for _, tc := range []struct{ path, user string }{
		{"/users/xuid(2533274791234567)/profile/settings", "2533274791234567"},
		{"/users/gt(Bob)/profile/settings", "gt(Bob)"},
		{"/users/GamerTag(AtkGamerTag77)/people", "AtkGamerTag77"},
		{"/users/xuid(2533274791234567)/people/xuid(2533274799999999)", "2533274799999999"},
	} {
		req, err := http.NewRequest("GET", "https://profile.xboxlive.com"+tc.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		body := `{"currentRequests":11,"maxRequests":10,"periodInSeconds":15,"limitType":"Rate ` + tc.path + `","debugMessage":"user ` + tc.user + `"}`
		b := parse429([]byte(body), nil, req)
		if b == nil {
			t.Fatalf("%s: no body", tc.path)
		}
		if text := b.LimitType + " " + b.DebugMessage; strings.Contains(text, tc.user) {
			t.Errorf("%s: the 429's text names the path's user: %q", tc.path, text)
		}
	}
	// A path naming no user keeps its text.
	req, _ := http.NewRequest("GET", "https://titlehub.xboxlive.com/titles(1234)/decoration", nil)
	if b := parse429([]byte(`{"limitType":"Rate titles(1234)"}`), nil, req); b == nil || b.LimitType != "Rate titles(1234)" {
		t.Errorf("a path naming no user: %+v", b)
	}
}
