package mock

import (
	"net/http"
	"strings"
	"testing"
)

// TestAttackBatchXUIDsHaveOneSpelling: a XUID "is written with no leading
// zero (internal/xblid)" (TestWorldIDsHaveOneSpelling), and the batch
// calls that name users refuse what is not one: profile's batch answers
// 400 "userIds must hold xuids", userstats' contract-2 batch 400 "xuids
// must hold xuids". The presence batch ("users must hold 1 to 1100
// xuids") and userstats' contract-1 batch (requestedusers) answer a
// second spelling of user 1 ("0" + XUID) and a string that is no XUID at
// all as users of their own, with their own answers: one user read two
// ways, and any text echoed back as a user.
func TestAttackBatchXUIDsHaveOneSpelling(t *testing.T) {
	h := NewHandler()
	tok := Token(xuid1, title1)
	for _, bad := range []string{"0" + xuid1, "-1", "not-a-xuid"} {
		t.Run("presence "+bad, func(t *testing.T) {
			r := do(t, h, "POST", "https://userpresence.xboxlive.com/users/batch", tok, `{"users":["`+bad+`"],"level":"all"}`)
			if r.status != 400 {
				t.Errorf("presence batch naming %q: %d %s, want 400 as profile's batch answers", bad, r.status, r.body)
			}
		})
		t.Run("userstats "+bad, func(t *testing.T) {
			r := do(t, h, "POST", "https://userstats.xboxlive.com/batch?operation=read", tok,
				`{"requestedusers":["`+bad+`"],"requestedscids":[{"scid":"`+SCID(title1)+`","requestedstats":["kills"]}]}`)
			if r.status != 400 {
				t.Errorf("userstats batch naming %q: %d %s, want 400 as the contract-2 batch answers", bad, r.status, r.body)
			}
		})
	}
	// The references the promise is read from hold.
	if r := do(t, h, "POST", "https://profile.xboxlive.com/users/batch/profile/settings", tok,
		`{"userIds":["0`+xuid1+`"],"settings":["Gamertag"]}`); r.status != 400 {
		t.Errorf("profile batch naming 0%s: %d, want 400", xuid1, r.status)
	}
	req, err := http.NewRequest("POST", "https://userstats.xboxlive.com/batch",
		strings.NewReader(`{"arrangebyfield":"xuid","xuids":["0`+xuid1+`"],"stats":[{"name":"kills","titleId":"`+title1+`"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", tok)
	req.Header.Set("x-xbl-contract-version", "2")
	r := send(t, h, req)
	if r.status != 400 || !strings.Contains(r.body, "xuids must hold xuids") {
		t.Errorf("contract-2 batch naming 0%s: %d %s, want 400", xuid1, r.status, r.body)
	}
}
