package mock

import (
	"net/http"
	"testing"
	"time"
)

// TestPresenceUserState: PUT /users/xuid(N)/state, as
// OpenXbox/xbox-webapi-python's set_presence_own sends it ({"state":
// "Active"} or "Cloaked"; its test expects 200 with no body): a cloaked
// user reads as Offline to others, with no device and no last seen, even
// after their title writes; "Active" shows them again; another user's
// state is 403, an unknown state 400; the call counts as a presence write
// (3 in 15 s: the clock moves 15 s before each write).
func TestPresenceUserState(t *testing.T) {
	now := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	h := Must(New(Config{Now: func() time.Time { return now }}))
	write := func(method, url, auth, body string) result {
		t.Helper()
		now = now.Add(15 * time.Second)
		return do(t, h, method, url, auth, body)
	}
	tok := Token(xuid1, title1)
	state := "https://userpresence.xboxlive.com/users/xuid(" + xuid1 + ")/state"
	set := "https://userpresence.xboxlive.com/users/xuid(" + xuid1 + ")/devices/current/titles/current"
	get := func() presenceRecord {
		t.Helper()
		var rec presenceRecord
		decodeJSON(t, do(t, h, "GET", "https://userpresence.xboxlive.com/users/xuid("+xuid1+")", Token(xuid2, title1), ""), &rec)
		return rec
	}
	if r := write("POST", set, tok, `{"state":"active"}`); r.status != http.StatusOK {
		t.Fatalf("title write: %d %s", r.status, r.body)
	}
	r := write("PUT", state, tok, `{"state":"Cloaked"}`)
	if r.status != http.StatusOK || r.body != "" {
		t.Fatalf("cloak: %d %q, want 200 with no body", r.status, r.body)
	}
	if r.header.Get("RateLimit") == "" {
		t.Error("the state write was not counted")
	}
	if rec := get(); rec.State != "Offline" || rec.Devices != nil || rec.LastSeen != nil {
		t.Errorf("cloaked: %+v, want Offline with nothing more", rec)
	}
	write("POST", set, tok, `{"state":"active"}`)
	if rec := get(); rec.State != "Offline" {
		t.Errorf("cloaked after a title write: %+v, want Offline", rec)
	}
	write("PUT", state, tok, `{"state":"Active"}`)
	if rec := get(); rec.State != "Online" {
		t.Errorf("active again: %+v, want Online", rec)
	}
	if r := write("PUT", state, Token(xuid2, title1), `{"state":"Cloaked"}`); r.status != http.StatusForbidden {
		t.Errorf("another user's state: %d, want 403", r.status)
	}
	if r := write("PUT", state, tok, `{"state":"Away"}`); r.status != http.StatusBadRequest {
		t.Errorf("state Away: %d, want 400", r.status)
	}
}
