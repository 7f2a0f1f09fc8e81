package client

// An outside attack on package client: malformed answers (nulls, wrong
// types, overflowing numbers, negative counts, deep nesting, escape codes)
// to every typed call; listings that never end while handing out items.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"
)

var clAtkHosts = []string{"achievements.xboxlive.com", "leaderboards.xboxlive.com", "peoplehub.xboxlive.com",
	"privacy.xboxlive.com", "profile.xboxlive.com", "reputation.xboxlive.com", "sessiondirectory.xboxlive.com",
	"smartmatch.xboxlive.com", "social.xboxlive.com", "titlehub.xboxlive.com", "userpresence.xboxlive.com",
	"usersearch.xboxlive.com", "userstats.xboxlive.com"}

// clAtkCalls is every typed call of User but Subscribe.
var clAtkCalls = []struct {
	name string
	do   func(ctx context.Context, u *User) error
}{
	{"GetProfiles", func(ctx context.Context, u *User) error {
		_, err := u.GetProfiles(ctx, []string{me, other}, []string{"Gamertag"})
		return err
	}},
	{"GetProfile", func(ctx context.Context, u *User) error {
		_, err := u.GetProfile(ctx, other, []string{"Gamertag"})
		return err
	}},
	{"GetProfileByGamertag", func(ctx context.Context, u *User) error {
		_, err := u.GetProfileByGamertag(ctx, "Someone", []string{"Gamertag"})
		return err
	}},
	{"GetPresence", func(ctx context.Context, u *User) error { _, err := u.GetPresence(ctx, other); return err }},
	{"GetPresenceBatch", func(ctx context.Context, u *User) error {
		_, err := u.GetPresenceBatch(ctx, []string{me, other})
		return err
	}},
	{"SetPresence", func(ctx context.Context, u *User) error { return u.SetPresence(ctx, true, nil) }},
	{"GetPeople", func(ctx context.Context, u *User) error { _, err := u.GetPeople(ctx, me, 10, ""); return err }},
	{"AllPeople", func(ctx context.Context, u *User) error {
		for _, err := range u.AllPeople(ctx, me, 10) {
			if err != nil {
				return err
			}
		}
		return nil
	}},
	{"CheckPermission", func(ctx context.Context, u *User) error {
		_, err := u.CheckPermission(ctx, "CommunicateUsingText", other)
		return err
	}},
	{"ListAchievements", func(ctx context.Context, u *User) error {
		p, err := u.ListAchievements(ctx, me, title, 2, "")
		for i := range p.Items {
			_ = p.Items[i].Percent()
		}
		return err
	}},
	{"AllAchievements", func(ctx context.Context, u *User) error {
		n := 0
		for a, err := range u.AllAchievements(ctx, me, title, 2) {
			if err != nil {
				return err
			}
			_ = a.Percent()
			if n++; n > 10000 {
				break
			}
		}
		return nil
	}},
	{"GetAchievement", func(ctx context.Context, u *User) error {
		a, err := u.GetAchievement(ctx, me, scid, "1")
		_ = a.Percent()
		return err
	}},
	{"UpdateAchievement", func(ctx context.Context, u *User) error {
		_, err := u.UpdateAchievement(ctx, scid, "1", 10)
		return err
	}},
	{"GetAchievementHistory", func(ctx context.Context, u *User) error {
		_, err := u.GetAchievementHistory(ctx, me, 10, "")
		return err
	}},
	{"GetStats", func(ctx context.Context, u *User) error {
		s, err := u.GetStats(ctx, me, scid, []string{"kills"})
		_ = s.Stats()
		return err
	}},
	{"GetStatsBatch", func(ctx context.Context, u *User) error {
		_, err := u.GetStatsBatch(ctx, []string{me, other}, scid, []string{"kills"})
		return err
	}},
	{"GetLeaderboard", func(ctx context.Context, u *User) error {
		_, err := u.GetLeaderboard(ctx, scid, "kills", 10, "")
		return err
	}},
	{"GetStatLeaderboard", func(ctx context.Context, u *User) error {
		_, err := u.GetStatLeaderboard(ctx, scid, "kills", 10, "")
		return err
	}},
	{"AllLeaderboard", func(ctx context.Context, u *User) error {
		n := 0
		for _, err := range u.AllLeaderboard(ctx, scid, "kills", 10) {
			if err != nil {
				return err
			}
			if n++; n > 10000 {
				break
			}
		}
		return nil
	}},
	{"GetFriends", func(ctx context.Context, u *User) error { _, err := u.GetFriends(ctx, me); return err }},
	{"GetRecentPlayers", func(ctx context.Context, u *User) error { _, err := u.GetRecentPlayers(ctx); return err }},
	{"GetTitleHistory", func(ctx context.Context, u *User) error { _, err := u.GetTitleHistory(ctx, me, 10); return err }},
	{"GetTitle", func(ctx context.Context, u *User) error { _, err := u.GetTitle(ctx, title); return err }},
	{"SearchUsers", func(ctx context.Context, u *User) error { _, err := u.SearchUsers(ctx, "someone"); return err }},
	{"GetSession", func(ctx context.Context, u *User) error {
		_, err := u.GetSession(ctx, SessionRef{scid, "quick", "s1"})
		return err
	}},
	{"WriteSession", func(ctx context.Context, u *User) error {
		_, _, err := u.WriteSession(ctx, SessionRef{scid, "quick", "s1"}, map[string]any{"properties": map[string]any{}})
		return err
	}},
	{"SendInvites", func(ctx context.Context, u *User) error {
		_, err := u.SendInvites(ctx, SessionRef{scid, "quick", "s1"}, []string{other})
		return err
	}},
	{"CreateMatchTicket", func(ctx context.Context, u *User) error {
		_, err := u.CreateMatchTicket(ctx, scid, "hopper", MatchTicketRequest{Session: SessionRef{scid, "quick", "s1"}, GiveUp: time.Minute})
		return err
	}},
	{"SubmitReputationFeedback", func(ctx context.Context, u *User) error {
		return u.SubmitReputationFeedback(ctx, other, Feedback{Type: "FairPlayKillsTeammates", Text: "r"})
	}},
}

// clAtkHostileBodies are 2xx answers no service sends.
var clAtkHostileBodies = map[string]string{
	"null":             `null`,
	"empty list":       `[]`,
	"string":           `"\u001b[31mred"`,
	"huge number":      `1e999`,
	"true":             `true`,
	"null fields":      `{"profileUsers":null,"people":null,"titles":null,"achievements":null,"users":null,"results":null,"userList":null,"leaderboardInfo":null,"pagingInfo":null,"xuid":null,"scids":null}`,
	"null elements":    `{"profileUsers":[null],"people":[null],"titles":[null],"achievements":[null],"users":[null],"results":[null],"userList":[null],"leaderboardInfo":{},"pagingInfo":{"continuationToken":null},"totalCount":0,"xuid":"2533274791234567","state":"Online","scids":[null],"isAllowed":true,"id":"h","ticketId":"t"}`,
	"wrong types":      `{"profileUsers":{},"people":"x","titles":1,"achievements":{"a":1},"users":true,"results":"r","xuid":12,"state":[],"totalCount":"5","isAllowed":"yes"}`,
	"negative counts":  `{"totalCount":-9223372036854775808,"people":[{"xuid":"1"}],"leaderboardInfo":{"totalCount":-1},"userList":[{"rank":-5}],"pagingInfo":{"totalRecords":-7,"continuationToken":"x"},"titles":[],"waitTime":-1,"ticketId":"t"}`,
	"overflowing ints": `{"totalCount":1e30,"people":[]}`,
	"NaN-like":         `{"achievements":[{"id":"1","progression":{"requirements":[{"current":"NaN","target":"-Inf"}]}}],"pagingInfo":{}}`,
	"deep nesting":     strings.Repeat(`{"a":`, 20000) + `1` + strings.Repeat(`}`, 20000),
	"deep lists":       strings.Repeat(`[`, 200000),
	"invalid utf8":     "{\"xuid\":\"\xff\xfe\",\"state\":\"\xc3\"}",
}

// TestAttackHostileBodiesNeverPanic: bad input never panics, and "every
// failure of a call is an *Error". Each call gets each hostile 2xx answer.
func TestAttackHostileBodiesNeverPanic(t *testing.T) {
	for bname, body := range clAtkHostileBodies {
		srv := clAtkServer(t, body)
		c := hostileClient(t, srv, plainTransport(t), clAtkHosts...)
		for _, call := range clAtkCalls {
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("%s on %s: panic %v", call.name, bname, r)
					}
				}()
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				err := call.do(ctx, c.As(me))
				var e *Error
				if err != nil && !errors.As(err, &e) {
					t.Errorf("%s on %s: %T %v, want an *Error", call.name, bname, err, err)
				}
				if err != nil && (len(err.Error()) > 2000 || !utf8.ValidString(err.Error()) || strings.ContainsAny(err.Error(), "\x1b\n\r")) {
					t.Errorf("%s on %s: error text not clipped or escaped: %q", call.name, bname, err.Error()[:min(300, len(err.Error()))])
				}
				if ctx.Err() != nil {
					t.Errorf("%s on %s: took its whole 5 s deadline", call.name, bname)
				}
			}()
		}
	}
}

// TestAttackNegativeTotalCount: Page's TotalCount "is the number of items in
// all pages, when the service says ...; 0 otherwise"; a number of items is
// not negative. A service saying -1 is not saying a count.
func TestAttackNegativeTotalCount(t *testing.T) {
	srv := clAtkServer(t, `{"totalCount":-5,"people":[{"xuid":"2533274799999999"}]}`)
	c := hostileClient(t, srv, plainTransport(t), "social.xboxlive.com")
	p, err := c.As(me).GetPeople(clAtkCtx(t), me, 0, "")
	if err == nil && p.TotalCount < 0 {
		t.Errorf("GetPeople returned TotalCount %d with no error", p.TotalCount)
	}
	srv2 := clAtkServer(t, `{"leaderboardInfo":{"totalCount":-3},"userList":[]}`)
	c2 := hostileClient(t, srv2, plainTransport(t), "leaderboards.xboxlive.com")
	lb, err := c2.As(me).GetLeaderboard(clAtkCtx(t), scid, "kills", 0, "")
	if err == nil && lb.TotalCount < 0 {
		t.Errorf("GetLeaderboard returned TotalCount %d with no error", lb.TotalCount)
	}
	srv3 := clAtkServer(t, `{"titles":[],"pagingInfo":{"totalRecords":-9}}`)
	c3 := hostileClient(t, srv3, plainTransport(t), "achievements.xboxlive.com")
	h, err := c3.As(me).GetAchievementHistory(clAtkCtx(t), me, 0, "")
	if err == nil && h.TotalCount < 0 {
		t.Errorf("GetAchievementHistory returned TotalCount %d with no error", h.TotalCount)
	}
}

// TestAttackEndlessListingEndsWithContext: "every call ends within its
// context": a listing that hands out one item a page with ever new
// tokens, for ever, ends once the caller's context does, with an *Error.
func TestAttackEndlessListingEndsWithContext(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := n.Add(1)
		switch {
		case strings.Contains(r.URL.Path, "/people"):
			fmt.Fprintf(w, `{"totalCount":9223372036854775807,"people":[{"xuid":"%d"}]}`, 2533274700000000+i)
		case strings.Contains(r.URL.Path, "/leaderboards/"):
			fmt.Fprintf(w, `{"leaderboardInfo":{"totalCount":1},"userList":[{"rank":%d}],"pagingInfo":{"continuationToken":"t%d"}}`, i, i)
		default:
			fmt.Fprintf(w, `{"achievements":[{"id":"%d"}],"pagingInfo":{"continuationToken":"t%d"}}`, i, i)
		}
	}))
	defer srv.Close()
	c := hostileClient(t, srv, plainTransport(t), "social.xboxlive.com", "leaderboards.xboxlive.com", "achievements.xboxlive.com")
	u := c.As(me)
	type listing func(ctx context.Context) error
	for name, l := range map[string]listing{
		"AllPeople": func(ctx context.Context) error {
			for _, err := range u.AllPeople(ctx, me, 1) {
				if err != nil {
					return err
				}
			}
			return nil
		},
		"AllLeaderboard": func(ctx context.Context) error {
			for _, err := range u.AllLeaderboard(ctx, scid, "kills", 1) {
				if err != nil {
					return err
				}
			}
			return nil
		},
		"AllAchievements": func(ctx context.Context) error {
			for _, err := range u.AllAchievements(ctx, me, title, 1) {
				if err != nil {
					return err
				}
			}
			return nil
		},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		start := time.Now()
		done := make(chan error, 1)
		go func() { done <- l(ctx) }()
		select {
		case err := <-done:
			var e *Error
			if !errors.As(err, &e) {
				t.Errorf("%s past its deadline: %T %v, want an *Error", name, err, err)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("%s ended %v after its 300 ms deadline", name, d)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("%s still fetching 10 s after its 300 ms deadline (%d requests)", name, n.Load())
		}
		cancel()
	}
}

// TestAttackMalformedAnswerErrorTextEscaped: a 2xx answer whose JSON is
// malformed quotes the service's bytes in json's error; the error text is
// clipped and escaped.
func TestAttackMalformedAnswerErrorTextEscaped(t *testing.T) {
	bodies := []string{
		`{"profileUsers":[{"id":"` + strings.Repeat("\x1b[2J", 5000) + `"` + "\n\x00",
		"{\"profileUsers\":[{\"id\":1,\"settings\":[{\"id\":\"\x1b[31m\",\"value\":{}}]}]}",
		"\x1b]0;owned\x07" + strings.Repeat("\xff", 3000),
	}
	for i, b := range bodies {
		srv := clAtkServer(t, b)
		c := hostileClient(t, srv, plainTransport(t), "profile.xboxlive.com")
		_, err := c.As(me).GetProfiles(clAtkCtx(t), []string{other}, []string{"Gamertag"})
		if err == nil {
			t.Errorf("body %d: no error", i)
			continue
		}
		s := err.Error()
		if len(s) > 1200 || !utf8.ValidString(s) || strings.ContainsAny(s, "\x1b\x00\x07\n") {
			t.Errorf("body %d: error text %d bytes, not clipped and escaped: %q", i, len(s), s[:min(200, len(s))])
		}
	}
}
