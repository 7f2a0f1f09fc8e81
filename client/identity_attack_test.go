package client

// An outside attack on package client: a hostile service whose answers
// name other users, titles or achievements than the call asked for. The
// project's promise: one user's call never returns another user's data as
// this user's; GetPresence already refuses another user's record
// (TestGetPresenceOfAnotherUserRefused), and these are the other calls.

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

const clAtkThird = "2533274700000001" // a user no call here asks for

func clAtkCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func clAtkServer(t *testing.T, body string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestAttackGetStatsOfAnotherUserRefused: GetStats(X) "returns named
// statistics of one user ... The answer's root is the user: {"xuid", ...}".
// An answer whose root names another user is not X's statistics.
func TestAttackGetStatsOfAnotherUserRefused(t *testing.T) {
	srv := clAtkServer(t, fmt.Sprintf(`{"xuid":%q,"scids":[{"scid":%q,"stats":[{"statname":"kills","type":"Integer","value":"999"}]}]}`, me, scid))
	c := hostileClient(t, srv, plainTransport(t), "userstats.xboxlive.com")
	s, err := c.As(me).GetStats(clAtkCtx(t), other, scid, []string{"kills"})
	if err == nil {
		t.Errorf("GetStats(%s) returned the statistics of %s (%+v) with no error", other, s.XUID, s)
	}
}

// TestAttackGetStatsBatchUnaskedUsers: GetStatsBatch "returns named
// statistics of 1 to 100 users, by xuid": the users asked for. An answer
// naming a user not asked for must not come back in the map.
func TestAttackGetStatsBatchUnaskedUsers(t *testing.T) {
	srv := clAtkServer(t, fmt.Sprintf(`{"users":[{"xuid":%q,"scids":[]},{"xuid":%q,"scids":[]},{"xuid":"","scids":[]}]}`, other, clAtkThird))
	c := hostileClient(t, srv, plainTransport(t), "userstats.xboxlive.com")
	m, err := c.As(me).GetStatsBatch(clAtkCtx(t), []string{other}, scid, []string{"kills"})
	if err != nil {
		return // refusing the answer is fine
	}
	for x := range m {
		if x != other {
			t.Errorf("GetStatsBatch([%s]) returned statistics keyed %q, a user not asked for (map %v)", other, x, m)
		}
	}
}

// TestAttackGetProfilesUnaskedUsers: GetProfiles "returns the named settings
// of 1 to 100 users": the xuids asked for. A record of a user not asked for
// (or one with no id at all) must not come back.
func TestAttackGetProfilesUnaskedUsers(t *testing.T) {
	srv := clAtkServer(t, fmt.Sprintf(`{"profileUsers":[{"id":%q,"settings":[{"id":"Gamertag","value":"Other"}]},`+
		`{"id":%q,"settings":[{"id":"Gamertag","value":"Intruder"}]},{"id":"","settings":[]}]}`, other, clAtkThird))
	c := hostileClient(t, srv, plainTransport(t), "profile.xboxlive.com")
	ps, err := c.As(me).GetProfiles(clAtkCtx(t), []string{other}, []string{"Gamertag"})
	if err != nil {
		return
	}
	for _, p := range ps {
		if p.XUID != other {
			t.Errorf("GetProfiles([%s]) returned a profile of %q, a user not asked for: %+v", other, p.XUID, ps)
		}
	}
}

// TestAttackGetProfilesDuplicatedUser: two records for one user, with
// different gamertags; at most one of them is the user's. Returning both
// (or either silently) hands back another record as this user's.
func TestAttackGetProfilesDuplicatedUser(t *testing.T) {
	srv := clAtkServer(t, fmt.Sprintf(`{"profileUsers":[{"id":%q,"settings":[{"id":"Gamertag","value":"Real"}]},`+
		`{"id":%q,"settings":[{"id":"Gamertag","value":"Forged"}]}]}`, other, other))
	c := hostileClient(t, srv, plainTransport(t), "profile.xboxlive.com")
	ps, err := c.As(me).GetProfiles(clAtkCtx(t), []string{other}, []string{"Gamertag"})
	if err == nil && len(ps) != 1 {
		t.Errorf("GetProfiles([%s]) returned %d records for one user asked once: %+v", other, len(ps), ps)
	}
	p, err := c.As(me).GetProfile(clAtkCtx(t), other, []string{"Gamertag"})
	if err == nil {
		t.Errorf("GetProfile(%s) picked %q of two conflicting records with no error", other, p.Settings["Gamertag"])
	}
}

// TestAttackGetPresenceBatchUnaskedUsers: GetPresenceBatch "returns the
// presence of 1 to 1100 users": those asked for. GetPresence refuses
// another user's record; the batch returned them.
func TestAttackGetPresenceBatchUnaskedUsers(t *testing.T) {
	srv := clAtkServer(t, fmt.Sprintf(`[{"xuid":%q,"state":"Online"},{"xuid":%q,"state":"Online"},{"xuid":%q,"state":"Away"}]`, other, clAtkThird, me))
	c := hostileClient(t, srv, plainTransport(t), "userpresence.xboxlive.com")
	ps, err := c.As(me).GetPresenceBatch(clAtkCtx(t), []string{other})
	if err != nil {
		return
	}
	for _, p := range ps {
		if p.XUID != other {
			t.Errorf("GetPresenceBatch([%s]) returned the presence of %s, not asked for: %+v", other, p.XUID, ps)
		}
	}
}

// TestAttackGetTitleOfAnotherTitle: GetTitle(T) "returns a title with the
// acting user's progress in it": T, not whichever title the service names.
func TestAttackGetTitleOfAnotherTitle(t *testing.T) {
	srv := clAtkServer(t, `{"titles":[{"titleId":"99","name":"Another Game","achievement":{"currentGamerscore":5000}}]}`)
	c := hostileClient(t, srv, plainTransport(t), "titlehub.xboxlive.com")
	ti, err := c.As(me).GetTitle(clAtkCtx(t), title)
	if err == nil && ti.TitleID != title {
		t.Errorf("GetTitle(%s) returned title %q (%s) with no error", title, ti.TitleID, ti.Name)
	}
}

// TestAttackGetTitleHistoryMoreThanMaxItems: GetTitleHistory "returns the
// titles a user played, most recent first, at most maxItems of them".
func TestAttackGetTitleHistoryMoreThanMaxItems(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"titles":[`)
	for i := range 500 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"titleId":"%d","name":"Title number %d padded"}`, 1000+i, i)
	}
	b.WriteString(`]}`)
	srv := clAtkServer(t, b.String())
	c := hostileClient(t, srv, plainTransport(t), "titlehub.xboxlive.com")
	ts, err := c.As(me).GetTitleHistory(clAtkCtx(t), other, 3)
	if err == nil && len(ts) > 3 {
		t.Errorf("GetTitleHistory(maxItems 3) returned %d titles with no error", len(ts))
	}
}

// TestAttackGetAchievementOfAnotherID: GetAchievement(X, scid, "1") "returns
// one achievement": achievement 1 of scid, not another the service names.
func TestAttackGetAchievementOfAnotherID(t *testing.T) {
	srv := clAtkServer(t, fmt.Sprintf(`{"achievements":[{"id":"42","serviceConfigId":%q,"name":"Another","progressState":"Achieved"}]}`, scid))
	c := hostileClient(t, srv, plainTransport(t), "achievements.xboxlive.com")
	a, err := c.As(me).GetAchievement(clAtkCtx(t), me, scid, "1")
	if err == nil && a.ID != "1" {
		t.Errorf("GetAchievement(id 1) returned achievement %q (%s, %s) with no error", a.ID, a.Name, a.ProgressState)
	}
	srv2 := clAtkServer(t, `{"achievements":[{"id":"1","serviceConfigId":"00000000-0000-0000-0000-0000deadbeef","name":"Other SCID"}]}`)
	c2 := hostileClient(t, srv2, plainTransport(t), "achievements.xboxlive.com")
	a, err = c2.As(me).GetAchievement(clAtkCtx(t), me, scid, "1")
	if err == nil && a.ServiceConfigID != "" && !strings.EqualFold(a.ServiceConfigID, scid) {
		t.Errorf("GetAchievement(scid %s) returned an achievement of scid %s with no error", scid, a.ServiceConfigID)
	}
}

// TestAttackSendInvitesHandleOfAnotherUser: SendInvites "returns the invite
// handles created", one for each user invited; a handle naming another
// invitee is not the one created for this user.
func TestAttackSendInvitesHandleOfAnotherUser(t *testing.T) {
	srv := clAtkServer(t, fmt.Sprintf(`{"id":"h1","type":"invite","invitedXuid":%q,"senderXuid":%q}`, clAtkThird, me))
	c := hostileClient(t, srv, plainTransport(t), "sessiondirectory.xboxlive.com")
	hs, err := c.As(me).SendInvites(clAtkCtx(t), SessionRef{scid, "quick", "s1"}, []string{other})
	if err == nil {
		for _, h := range hs {
			if h.InvitedXUID != other {
				t.Errorf("SendInvites([%s]) returned a handle inviting %s with no error", other, h.InvitedXUID)
			}
		}
	}
}

// TestAttackBatchedGetProfileDuplicates: with Config.BatchWindow, GetProfile
// of two users goes as one GetProfiles; an answer giving the first user's
// record twice, the second copy a forgery, hands one of them back as the
// user's with no error.
func TestAttackBatchedGetProfileDuplicates(t *testing.T) {
	srv := clAtkServer(t, fmt.Sprintf(`{"profileUsers":[{"id":%q,"settings":[{"id":"Gamertag","value":"Real"}]},`+
		`{"id":%q,"settings":[{"id":"Gamertag","value":"Other"}]},{"id":%q,"settings":[{"id":"Gamertag","value":"Forged"}]}]}`, other, clAtkThird, other))
	c, err := New(Config{TitleID: title, Transport: plainTransport(t), BatchWindow: 30 * time.Millisecond,
		Endpoints: map[string]string{"profile.xboxlive.com": srv.URL},
		Tokens:    TokenFunc(func(context.Context, string) (Token, error) { return Token{Authorization: hostileToken}, nil })})
	if err != nil {
		t.Fatal(err)
	}
	ctx := clAtkCtx(t)
	type res struct {
		p   Profile
		err error
	}
	ch := make(chan res, 2)
	for _, x := range []string{other, clAtkThird} {
		go func() {
			p, err := c.As(me).GetProfile(ctx, x, []string{"Gamertag"})
			ch <- res{p, err}
		}()
	}
	for range 2 {
		r := <-ch
		if r.err == nil && r.p.XUID == other {
			t.Errorf("batched GetProfile(%s) returned gamertag %q of two conflicting records with no error", other, r.p.Settings["Gamertag"])
		}
	}
}
