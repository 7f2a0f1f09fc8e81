package client

// A second outside attack on package client's typed calls (2026-12-05): a
// hostile service answering what the first attack's fix (onlyAsked, the
// checks of GetStats, GetTitle, GetAchievement, SendInvites, GetTitleHistory)
// left unchecked: the service configuration, title, session or gamertag an
// answer names, more items than asked for, one item twice.

import (
	"fmt"
	"strings"
	"testing"
)

const clAtk2OtherSCID = "00000000-0000-4000-8000-000000000bad" // a service configuration no call here asks for

// TestAttackGetStatsOfAnotherSCID: GetStats(X, S) "returns named statistics of
// one user (GET /users/xuid(X)/scids/{scid}/stats/{a,b})": the statistics
// of S. An answer whose only service configuration is another's is not S's
// statistics; the fix checked the root's user only.
func TestAttackGetStatsOfAnotherSCID(t *testing.T) {
	srv := clAtkServer(t, fmt.Sprintf(`{"xuid":%q,"scids":[{"scid":%q,"stats":[{"statname":"kills","type":"Integer","value":"999"}]}]}`, other, clAtk2OtherSCID))
	c := hostileClient(t, srv, plainTransport(t), "userstats.xboxlive.com")
	s, err := c.As(me).GetStats(clAtkCtx(t), other, scid, []string{"kills"})
	if err == nil {
		for _, sc := range s.SCIDs {
			if !strings.EqualFold(sc.SCID, scid) {
				t.Errorf("GetStats(%s, %s) returned the statistics of service configuration %s (%+v) with no error", other, scid, sc.SCID, s)
			}
		}
	}
}

// TestAttackGetStatsBatchOfAnotherSCID: the same through GetStatsBatch, whose
// records onlyAsked checks by user only.
func TestAttackGetStatsBatchOfAnotherSCID(t *testing.T) {
	srv := clAtkServer(t, fmt.Sprintf(`{"users":[{"xuid":%q,"scids":[{"scid":%q,"stats":[{"statname":"kills","type":"Integer","value":"999"}]}]}]}`, other, clAtk2OtherSCID))
	c := hostileClient(t, srv, plainTransport(t), "userstats.xboxlive.com")
	m, err := c.As(me).GetStatsBatch(clAtkCtx(t), []string{other}, scid, []string{"kills"})
	if err == nil {
		for x, s := range m {
			for _, sc := range s.SCIDs {
				if !strings.EqualFold(sc.SCID, scid) {
					t.Errorf("GetStatsBatch([%s], %s) returned for %s the statistics of service configuration %s with no error", other, scid, x, sc.SCID)
				}
			}
		}
	}
}

// TestAttackListAchievementsOfAnotherTitle: ListAchievements(X, T) "returns one
// page of a user's achievements in a title": T's. An achievement whose only
// title association is another title is not one of T's.
func TestAttackListAchievementsOfAnotherTitle(t *testing.T) {
	srv := clAtkServer(t, `{"achievements":[{"id":"1","serviceConfigId":"`+clAtk2OtherSCID+`","name":"Forged",`+
		`"titleAssociations":[{"name":"Another game","id":999}],"progressState":"Achieved","progression":{"requirements":[]}}],`+
		`"pagingInfo":{"continuationToken":null,"totalRecords":1}}`)
	c := hostileClient(t, srv, plainTransport(t), "achievements.xboxlive.com")
	p, err := c.As(me).ListAchievements(clAtkCtx(t), other, title, 0, "")
	if err == nil {
		for _, a := range p.Items {
			for _, ta := range a.TitleAssociations {
				if fmt.Sprint(ta.ID) != title {
					t.Errorf("ListAchievements(%s, title %s) returned achievement %q of title %d with no error", other, title, a.Name, ta.ID)
				}
			}
		}
	}
}

// TestAttackGetProfileByGamertagOfAnotherUser: GetProfileByGamertag "returns
// the named settings of the user whose gamertag is gamertag ...: its XUID
// is the way from a gamertag to a XUID". A record with no XUID, with one
// that is no XUID, or naming another gamertag, is not that user's.
func TestAttackGetProfileByGamertagOfAnotherUser(t *testing.T) {
	for _, tc := range []struct{ name, id, gamertag string }{
		{"no id", "", "Alice"},
		{"id not a XUID", "../../xuid(" + clAtkThird + ")", "Alice"},
		{"another gamertag", clAtkThird, "Mallory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := clAtkServer(t, fmt.Sprintf(`{"profileUsers":[{"id":%q,"settings":[{"id":"Gamertag","value":%q}]}]}`, tc.id, tc.gamertag))
			c := hostileClient(t, srv, plainTransport(t), "profile.xboxlive.com")
			p, err := c.As(me).GetProfileByGamertag(clAtkCtx(t), "Alice", []string{"Gamertag"})
			if err == nil {
				t.Errorf(`GetProfileByGamertag("Alice") returned XUID %q, gamertag %q, with no error`, p.XUID, p.Settings["Gamertag"])
			}
		})
	}
}

// TestAttackGetStatLeaderboardOfAnotherStat: GetStatLeaderboard(S, "kills")
// "returns one page of the global leaderboard of a title-managed
// statistic": kills'. A page whose column is another statistic is not it.
func TestAttackGetStatLeaderboardOfAnotherStat(t *testing.T) {
	srv := clAtkServer(t, fmt.Sprintf(`{"pagingInfo":{"continuationToken":null},"leaderboardInfo":{"totalCount":1,`+
		`"columnDefinition":{"statName":"deaths","type":"Integer"}},"userList":[{"xuid":%q,"gamertag":"X","rank":1,"value":"5"}]}`, other))
	c := hostileClient(t, srv, plainTransport(t), "leaderboards.xboxlive.com")
	lb, err := c.As(me).GetStatLeaderboard(clAtkCtx(t), scid, "kills", 10, "")
	if err == nil && lb.Column.StatName != "kills" {
		t.Errorf("GetStatLeaderboard(kills) returned the leaderboard of statistic %q with no error", lb.Column.StatName)
	}
}

// TestAttackSendInvitesHandleOfAnotherSession: SendInvites(ref, [B]) "invites
// users to a session ... and returns the invite handles created"; "A handle
// naming another invitee than its user is a failure". A handle inviting B
// to another session (the service's, or another title's) is no invite to
// ref, yet is returned as one.
func TestAttackSendInvitesHandleOfAnotherSession(t *testing.T) {
	srv := clAtkServer(t, fmt.Sprintf(`{"id":"h1","type":"invite","version":1,"invitedXuid":%q,"senderXuid":%q,`+
		`"sessionRef":{"scid":%q,"templateName":"evil","name":"elsewhere"}}`, other, me, clAtk2OtherSCID))
	c := hostileClient(t, srv, plainTransport(t), "sessiondirectory.xboxlive.com")
	ref := SessionRef{SCID: scid, Template: "lobby", Name: "mine"}
	hs, err := c.As(me).SendInvites(clAtkCtx(t), ref, []string{other})
	for _, h := range hs {
		if !strings.EqualFold(h.SessionRef.SCID, ref.SCID) || h.SessionRef.Template != ref.Template || h.SessionRef.Name != ref.Name {
			t.Errorf("SendInvites(%+v) returned a handle to session %+v (err %v)", ref, h.SessionRef, err)
		}
	}
}

// TestAttackGetPeopleSameUserTwice: GetPeople "returns one page of the people a
// user has a relationship with": one relationship a person. A page giving
// one person twice, a friend and not, is two conflicting records of one
// user.
func TestAttackGetPeopleSameUserTwice(t *testing.T) {
	srv := clAtkServer(t, fmt.Sprintf(`{"totalCount":2,"people":[{"xuid":%q,"isFriend":true},{"xuid":%q,"isFriend":false}]}`, clAtkThird, clAtkThird))
	c := hostileClient(t, srv, plainTransport(t), "social.xboxlive.com")
	p, err := c.As(me).GetPeople(clAtkCtx(t), other, 0, "")
	if err == nil && len(p.Items) == 2 && p.Items[0].XUID == p.Items[1].XUID {
		t.Errorf("GetPeople returned two conflicting records of %s with no error: %+v", clAtkThird, p.Items)
	}
}
