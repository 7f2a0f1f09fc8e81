package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/xblgo/fgrl/internal/wiretest"
)

// replay answers every request with a recorded exchange's answer and keeps
// what was sent. It stands for the service: nothing of the mock is used.
type replay struct {
	x    *wiretest.Exchange
	sent []sentRequest
}

type sentRequest struct {
	method, uri string
	header      http.Header
	body        []byte
}

func (r *replay) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
		req.Body.Close()
	}
	r.sent = append(r.sent, sentRequest{req.Method, req.URL.RequestURI(), req.Header.Clone(), body})
	rec := httptest.NewRecorder()
	rec.Header().Set("Content-Type", "application/json; charset=utf-8")
	rec.WriteHeader(r.x.Status)
	rec.Write(r.x.Answer)
	return rec.Result(), nil
}

// wireCases are every typed call, made with the arguments that produce the
// recorded request, and the values a game reads from the recorded answer.
var wireCases = []struct {
	name string
	do   func(ctx context.Context, u *User) (any, error)
	want any
}{
	{"GetProfiles", func(ctx context.Context, u *User) (any, error) {
		ps, err := u.GetProfiles(ctx, []string{"2669321029139235", "2584878536129841"}, []string{"GameDisplayName", "AppDisplayName", "AppDisplayPicRaw", "Gamerscore", "Gamertag", "GameDisplayPicRaw", "AccountTier", "TenureLevel", "XboxOneRep", "PreferredColor", "Location", "Bio", "Watermarks", "RealName"})
		var got []string
		for _, p := range ps {
			got = append(got, fmt.Sprintf("%s %d %s %s %s %s %s", p.XUID, len(p.Settings), p.Settings["Gamertag"], p.Settings["Gamerscore"], p.Settings["AccountTier"],
				p.Settings["TenureLevel"], p.Settings["RealName"]))
		}
		return got, err
	}, []string{"2669321029139235 14 e 98096 Gold 18 Eric Neustadter", "2584878536129841 14 Major Nelson 123757 Gold 16 Larry Hryb"}},
	{"GetPresence", func(ctx context.Context, u *User) (any, error) { return u.GetPresence(ctx, "2669321029139235") },
		Presence{XUID: "2669321029139235", State: "Online", Devices: []PresenceDevice{{Type: "PC", Titles: []PresenceTitle{{
			ID: "219630713", Name: "DefaultTitle", Placement: "Full", State: "Active", LastModified: "2015-01-21T23:19:21Z",
			Activity: &PresenceActivity{RichPresence: "Playing on Dust"}}}}}}},
	{"GetPresenceBatch", func(ctx context.Context, u *User) (any, error) {
		return u.GetPresenceBatch(ctx, []string{"2669321029139235", "2584878536129841", "2535428504476914"})
	}, []Presence{
		{XUID: "2669321029139235", State: "Online", Devices: []PresenceDevice{{Type: "XboxOne", Titles: []PresenceTitle{{
			ID: "99467", Name: "awesomeGame", Placement: "Full", State: "active", LastModified: "2013-01-31T16:00:00Z",
			Activity: &PresenceActivity{RichPresence: "yes"}}}}}},
		{XUID: "2584878536129841", State: "Offline", LastSeen: &LastSeen{DeviceType: "XboxOne", TitleID: "750323071",
			Timestamp: "2018-03-27T02:19:03.1204387Z"}},
		{XUID: "2535428504476914", State: "Offline"},
	}},
	{"SetPresence", func(ctx context.Context, u *User) (any, error) {
		return nil, u.SetPresence(ctx, true, &RichPresence{SCID: "1370999B-FCA2-4C53-8EC5-73493BCB67E5", ID: "playingMap", Params: []string{"dust"}})
	}, nil},
	{"GetPeople", func(ctx context.Context, u *User) (any, error) { return u.GetPeople(ctx, "2669321029139235", 2, "2") },
		Page[Person]{TotalCount: 12, ContinuationToken: "4", Items: []Person{
			{XUID: "2584878536129841", AddedDateTimeUtc: "2014-05-02T18:08:24.1583551Z", IsFavorite: true, IsFriend: true,
				IsFollowingCaller: true, IsFollowedByCaller: true, SocialNetworks: []string{"LegacyXboxLive"}},
			{XUID: "2533274791381930", AddedDateTimeUtc: "2016-11-20T09:41:02.5171226Z", IsFriend: true,
				IsFollowingCaller: true, IsFollowedByCaller: true, SocialNetworks: []string{}},
		}}},
	{"CheckPermission", func(ctx context.Context, u *User) (any, error) {
		p, err := u.CheckPermission(ctx, "CommunicateUsingText", "0")
		var reasons []string
		for _, r := range p.Reasons {
			reasons = append(reasons, r.Reason)
		}
		return []any{p.IsAllowed, reasons}, err
	}, []any{false, []string{"BlockListRestrictsTarget", "MuteListRestrictsTarget"}}},
	{"ListAchievements", func(ctx context.Context, u *User) (any, error) {
		p, err := u.ListAchievements(ctx, "2669321029139235", "219630713", 2, "")
		if err != nil || len(p.Items) != 2 {
			return p, err
		}
		a, b := p.Items[0], p.Items[1]
		return []any{a.ID, a.Name, a.ProgressState, a.Percent(), a.TitleAssociations, a.Rewards, a.Progression.TimeUnlocked,
			b.ID, b.ProgressState, b.Percent(), b.Progression.Requirements[0].Current, p.ContinuationToken}, nil
	}, []any{"5", "Your Team is Your Weapon", "Achieved", 100, []TitleAssociation{{"Halo 5: Guardians", 219630713}},
		[]Reward{{Value: "10", Type: "Gamerscore"}}, "2015-10-26T18:11:03.6689508Z", "9", "NotStarted", 0, "", "2"}},
	{"GetAchievement", func(ctx context.Context, u *User) (any, error) {
		a, err := u.GetAchievement(ctx, "2669321029139235", "1370999B-FCA2-4C53-8EC5-73493BCB67E5", "3")
		return []any{a.ID, a.ServiceConfigID, a.Name, a.ProgressState, a.Percent(), a.Progression.Requirements, a.Description}, err
	}, []any{"3", "1370999b-fca2-4c53-8ec5-73493bcb67e5", "On My Mark", "NotStarted", 0,
		[]Requirement{{ID: "77f38077-80fc-4d29-9264-e712f311815d", Target: "1"}}, "Simultaneously assassinated two Elites in Blue Team co-op."}},
	{"UpdateAchievement", func(ctx context.Context, u *User) (any, error) {
		return u.UpdateAchievement(ctx, "1370999B-FCA2-4C53-8EC5-73493BCB67E5", "1", 100)
	}, true},
	{"GetStats", func(ctx context.Context, u *User) (any, error) {
		return u.GetStats(ctx, "2533274792693551", "7492baca-c1b4-440d-a391-b7ef364a8d40", []string{"OverallReputation", "FairplayReputation"})
	}, UserStats{XUID: "2533274792693551", SCIDs: []SCIDStats{
		{"7492baca-c1b4-440d-a391-b7ef364a8d40", []Stat{{"OverallReputation", "Integer", "66"}, {"FairplayReputation", "Integer", "72"}}},
		{"7492baca-c1b4-440d-a391-b7ef364a8d41", []Stat{{"CommsReputation", "Integer", "66"}}},
	}}},
	{"GetStatsBatch", func(ctx context.Context, u *User) (any, error) {
		m, err := u.GetStatsBatch(ctx, []string{"2533274792693551", "2533274792693552"}, "7492baca-c1b4-440d-a391-b7ef364a8d40",
			[]string{"OverallReputation", "FairplayReputation"})
		return m["2533274792693552"].Stats(), err
	}, []Stat{{"OverallReputation", "Integer", "66"}, {"FairplayReputation", "Integer", "72"}}},
	{"GetLeaderboard", func(ctx context.Context, u *User) (any, error) {
		lb, err := u.GetLeaderboard(ctx, "c4060100-4951-4a51-a630-dce26c15b8c5", "lbEncodedRecordHoleId101RecordTypeId1", 2, "4")
		return []any{lb.TotalCount, lb.Column, lb.ContinuationToken, lb.Items}, err
	}, []any{218, LeaderboardColumn{"EnemyDefeats", "Integer"}, "6", []LeaderboardRow{
		{XUID: "2533275015216241", Gamertag: "NSC FaceRocker", UniqueModernGamertag: "Modern FaceRocker#1234", Rank: 5, GlobalRank: 5, Percentile: 0.9954, Value: "3660"},
		{XUID: "2533275024657260", Gamertag: "isspmarkbou", UniqueModernGamertag: "Modern isspmarkbou#2345", Rank: 6, GlobalRank: 6, Percentile: 0.9908, Value: "2208"},
	}}},
	{"GetStatLeaderboard", func(ctx context.Context, u *User) (any, error) {
		lb, err := u.GetStatLeaderboard(ctx, "c4060100-4951-4a51-a630-dce26c15b8c5", "EnemyDefeats", 1, "")
		return []any{lb.ContinuationToken, len(lb.Items), lb.Items[0].Value}, err
	}, []any{"1", 1, "3660"}},
	{"WriteSession", func(ctx context.Context, u *User) (any, error) {
		doc, created, err := u.WriteSession(ctx, SessionRef{"1370999b-fca2-4c53-8ec5-73493bcb67e5", "quickmatch", "lobby-1"}, json.RawMessage(`{
			"constants": {"custom": {}, "system": {"maxMembersCount": 10, "version": 1, "visibility": "private"}},
			"members": {"me": {"roles": {"lfg": "friend", "admin": "super"},
				"constants": {"custom": "Hello", "system": {"xuid": "2669321029139235", "initialize": true}},
				"properties": {"system": {"active": true, "groups": ["team-buzz", "posse.99"], "encounters": ["CoffeeShop-757093D8-E41F-49D0-BB13-17A49B20C6B9"]}}}}}`))
		return []any{created, sessionField(doc, "correlationId")}, err
	}, []any{true, "06365b64-3067-8039-ecee-3608af3d02fc"}},
	{"GetSession", func(ctx context.Context, u *User) (any, error) {
		doc, err := u.GetSession(ctx, SessionRef{"1370999B-FCA2-4C53-8EC5-73493BCB67E5", "quickmatch", "lobby-1"})
		return sessionField(doc, "correlationId"), err
	}, "06365b64-3067-8039-ecee-3608af3d02fc"},
	{"SendInvites", func(ctx context.Context, u *User) (any, error) {
		return u.SendInvites(ctx, SessionRef{"1370999b-fca2-4c53-8ec5-73493bcb67e5", "quickmatch", "lobby-1"}, []string{"2584878536129841"})
	}, []InviteHandle{{ID: "7b9e6b2e-1b2c-4e0b-9c61-1f6f4c3b3a10", Type: "invite", Version: 1,
		SessionRef:  SessionRef{"1370999b-fca2-4c53-8ec5-73493bcb67e5", "quickmatch", "lobby-1"},
		InvitedXUID: "2584878536129841", SenderXUID: "2669321029139235", Expiration: "2014-08-28T23:15:34.8852308Z"}}},
	{"CreateMatchTicket", func(ctx context.Context, u *User) (any, error) {
		return u.CreateMatchTicket(ctx, "07617C5B-3423-4505-B6C6-10A16E1E5DDB", "DeathMatch", MatchTicketRequest{
			Session: SessionRef{"FEEDFACE-0000-0000-0000-000000000001", "TestTemplate", "5E55104-0000-0000-0000-000000000001"},
			GiveUp:  10 * time.Second, Attributes: map[string]any{"desiredMap": "Hang 'em high", "desiredGameType": "Crazy King"}})
	}, MatchTicket{TicketID: "0584338f-a2ff-4eb9-b167-c0e8ddecae72", WaitTime: 60}},
	{"SubmitReputationFeedback", func(ctx context.Context, u *User) (any, error) {
		return nil, u.SubmitReputationFeedback(ctx, "2584878536129841", Feedback{Type: "CommsAbusiveVoice",
			Text: "They called me a doodoo-head!", Session: &SessionRef{"372D829B-FA8E-471F-B696-07B61F09EC20", "CaptureFlag5", "Halo556932"}})
	}, nil},
	{"GetFriends", func(ctx context.Context, u *User) (any, error) {
		p, err := u.GetFriends(ctx, "2669321029139235")
		if err != nil || len(p) != 2 {
			return p, err
		}
		return []any{p[0].XUID, p[0].Gamertag, p[0].GamerScore, p[0].PresenceState, p[0].IsFollowedByCaller, *p[0].Detail,
			p[1].Gamertag, p[1].PresenceText, p[1].PresenceDetails, p[1].RecentPlayer}, nil
	}, []any{"2533274812261808", "VolekTheFNDwarf", "70700", "Offline", true,
		HubDetail{AccountTier: "Gold", Bio: "Lover of nerd culture & those who embrace it. 🇺🇸 | 🎮 gamer & collector | 🎲 d&d | 💪 fitness | 💻 twitch | ⚔️cosplay twitch.tv/volek_the_fn_dwarf",
			Location: "Charlotte", Tenure: "12", FollowerCount: 50, FollowingCount: 34},
		"Aeroset", "YouTube", []HubPresence{
			{Device: "XboxOne", State: "Active", TitleID: "750323071", PresenceText: "Home"},
			{Device: "XboxOne", State: "Active", TitleID: "122001257", PresenceText: "YouTube", IsPrimary: true}},
		(*struct {
			Titles []string `json:"titles"`
			Text   string   `json:"text"`
		})(nil)}},
	{"GetRecentPlayers", func(ctx context.Context, u *User) (any, error) {
		p, err := u.GetRecentPlayers(ctx)
		if err != nil || len(p) != 1 {
			return p, err
		}
		return []any{p[0].Gamertag, p[0].RecentPlayer.Titles, p[0].Detail == nil}, nil
	}, []any{"VolekTheFNDwarf", []string{"1717113201"}, true}},
	{"GetTitleHistory", func(ctx context.Context, u *User) (any, error) {
		ts, err := u.GetTitleHistory(ctx, "2669321029139235", 5)
		if err != nil || len(ts) != 2 {
			return ts, err
		}
		t := ts[0]
		return []any{t.TitleID, t.Name, t.PFN, t.ServiceConfigID, t.Type, t.Devices, t.Achievement.CurrentGamerscore, t.Achievement.TotalGamerscore,
			t.TitleHistory.LastTimePlayed, ts[1].TitleID}, nil
	}, []any{"144389848", "Destiny 2", "Bungie.Destiny2basegame_8xb1a0vv8ay84", "bcc90100-31ff-42bd-b545-90cd089b36d8", "Game",
		[]string{"XboxOne", "PC", "XboxSeries"}, 880, 1240, "2020-08-28T14:10:31.2757911Z", "2105342780"}},
	{"GetTitle", func(ctx context.Context, u *User) (any, error) {
		t, err := u.GetTitle(ctx, "1717113201")
		if err != nil {
			return nil, err
		}
		return []any{t.TitleID, t.Name, t.Achievement.CurrentAchievements, t.Achievement.CurrentGamerscore, t.Achievement.TotalGamerscore,
			t.Achievement.ProgressPercentage, t.TitleHistory == nil}, nil
	}, []any{"1717113201", "Sea of Thieves", 2, 15, 2740, 1.0, true}},
	{"GetAchievementHistory", func(ctx context.Context, u *User) (any, error) {
		p, err := u.GetAchievementHistory(ctx, "2669321029139235", 1, "")
		if err != nil {
			return nil, err
		}
		return []any{len(p.Items), p.Items[0], p.TotalCount, p.ContinuationToken}, nil
	}, []any{32, TitleProgress{TitleID: 1331147, Name: "ESPN", ServiceConfigID: "054b0100-2668-415d-b546-f5f300144fcb", TitleType: "LiveApp",
		Platform: "Durango", LastUnlock: "2013-11-16T15:37:26.8018568Z", EarnedAchievements: 1}, 125, "32"}},
	{"SearchUsers", func(ctx context.Context, u *User) (any, error) {
		r, err := u.SearchUsers(ctx, "tux")
		if err != nil || len(r) != 8 {
			return r, err
		}
		return []any{r[0].XUID, r[0].Gamertag, r[1].Gamertag, r[7].Gamertag}, nil
	}, []any{"2533274895244106", "Tux", "TuX Rose", "Capitan Tux"}},
	{"GetProfileByGamertag", func(ctx context.Context, u *User) (any, error) {
		return u.GetProfileByGamertag(ctx, "e", []string{"Gamertag", "ModernGamertag", "ModernGamertagSuffix", "UniqueModernGamertag", "RealNameOverride", "Bio", "Location", "Gamerscore", "GameDisplayPicRaw", "TenureLevel", "AccountTier", "XboxOneRep", "PreferredColor", "Watermarks", "IsQuarantined"})
	}, Profile{XUID: "2669321029139235", Settings: map[string]string{"Gamertag": "e", "ModernGamertag": "e", "ModernGamertagSuffix": "", "UniqueModernGamertag": "e", "RealNameOverride": "Eric Neustadter", "Bio": "ex-Xbox", "Location": "about.me/thevowel", "Gamerscore": "98096", "GameDisplayPicRaw": "https://images-eds-ssl.xboxlive.com/image?url=z951ykn43p4FqWbbFvR2Ec.8vbDhj8G2Xe7JngaTToBrrCmIEEXHC9UNrdJ6P7KIl_5PaIHeJ592LG1L.uCOWneEDBhHctvuC06CzW38LKNYiVGTXqxcsQqYGIrr8hFz&format=png", "TenureLevel": "18", "AccountTier": "Gold", "XboxOneRep": "Superstar", "PreferredColor": "http://dlassets.xboxlive.com/public/content/ppl/colors/00000.json", "Watermarks": "XboxOriginalTeam|XboxLiveLaunchTeam|LaunchTeam|NxeTeam|KinectTeam|XboxOneTeam|XboxNxoeTeam", "IsQuarantined": "0"}}},
}

func sessionField(doc json.RawMessage, k string) string {
	var m map[string]any
	json.Unmarshal(doc, &m)
	s, _ := m[k].(string)
	return s
}

// TestWireRequestsAndAnswers: each typed call sends exactly XSAPI's request
// (method, path as escaped on the wire, query as a set, contract version,
// JSON body) and decodes the recorded answer into the values a game reads.
func TestWireRequestsAndAnswers(t *testing.T) {
	covered := map[string]bool{}
	for _, tc := range wireCases {
		covered[tc.name] = true
		t.Run(tc.name, func(t *testing.T) {
			x, err := wiretest.Load(tc.name)
			if err != nil {
				t.Fatal(err)
			}
			rp := &replay{x: x}
			c, err := New(Config{TitleID: x.Title, Tokens: StaticTokens{x.Caller: "XBL3.0 x=1;t"}, Transport: rp})
			if err != nil {
				t.Fatal(err)
			}
			got, err := tc.do(context.Background(), c.As(x.Caller))
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s decoded mismatch (-want +got):\n%s", tc.name, diff)
			}
			if len(rp.sent) != 1 {
				t.Fatalf("%s sent %d requests, want 1", tc.name, len(rp.sent))
			}
			checkSent(t, x, rp.sent[0])
		})
	}
	for _, n := range wiretest.Names() {
		if !covered[n] {
			t.Errorf("exchange %s has no client case", n)
		}
	}
}

func checkSent(t *testing.T, x *wiretest.Exchange, s sentRequest) {
	t.Helper()
	type line struct{ Method, Path, Contract, ContentType string }
	path, _, _ := bytes.Cut([]byte(s.uri), []byte("?"))
	got := line{s.method, string(path), s.header.Get("x-xbl-contract-version"), s.header.Get("Content-Type")}
	want := line{x.Method, x.RawPath, x.Header["X-Xbl-Contract-Version"], "application/json; charset=utf-8"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("request line mismatch (-want +got):\n%s", diff)
	}
	u, _ := http.NewRequest(s.method, "https://h"+s.uri, nil)
	if diff := cmp.Diff(nilIfEmpty(x.Query), nilIfEmpty(u.URL.Query())); diff != "" {
		t.Errorf("query mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(jsonValue(t, x.Request), jsonValue(t, s.body)); diff != "" {
		t.Errorf("request body mismatch (-want +got):\n%s", diff)
	}
}

func nilIfEmpty(q url.Values) url.Values {
	if len(q) == 0 {
		return nil
	}
	return q
}

func jsonValue(t *testing.T, b []byte) any {
	t.Helper()
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("body %q: %v", b, err)
	}
	return v
}
