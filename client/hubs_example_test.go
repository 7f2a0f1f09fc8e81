package client_test

import (
	"context"
	"fmt"

	"github.com/xblgo/fgrl/client"
	"github.com/xblgo/fgrl/mock"
)

// ada signs in to a mock seeded with a small world: Ada is friends with Bo
// and follows Cy, played title 1234567890 with both lately, and has played
// two titles.
func ada() *client.User {
	const adaX, bo, cy, title = "2533274791234567", "2533274792000001", "2533274792000002", "1234567890"
	score := 1500
	h, err := mock.New(mock.Config{World: mock.World{Accounts: []mock.WorldAccount{
		{XUID: adaX, Gamertag: "Ada", Gamerscore: &score, Friends: []string{bo}, Follows: []string{cy},
			RecentPlayers: []mock.WorldEncounter{{XUID: cy, Titles: []string{title}}},
			Titles: []mock.WorldTitle{
				{TitleID: title, LastPlayed: "2025-06-01T18:30:00Z", Achievements: map[string]int{"1": 100, "2": 40}},
				{TitleID: "1717113201", LastPlayed: "2025-05-01T12:00:00Z", Stats: map[string]int64{"wins": 3}},
			}},
		{XUID: bo, Gamertag: "Bo", Tier: "Silver"},
		{XUID: cy, Gamertag: "Cy"},
	}}})
	if err != nil {
		panic(err)
	}
	c, err := client.New(client.Config{TitleID: title, Tokens: client.StaticTokens{adaX: mock.Token(adaX, title)}, Transport: h})
	if err != nil {
		panic(err)
	}
	return c.As(adaX)
}

func ExampleUser_GetFriends() {
	me := ada()
	friends, err := me.GetFriends(context.Background(), me.XUID())
	for _, f := range friends {
		fmt.Println(f.Gamertag, f.IsFollowingCaller, f.PresenceState, f.Detail.AccountTier)
	}
	fmt.Println(err)
	// Output:
	// Bo true Offline Silver
	// Cy false Offline Gold
	// <nil>
}

func ExampleUser_GetRecentPlayers() {
	players, err := ada().GetRecentPlayers(context.Background())
	for _, p := range players {
		fmt.Println(p.Gamertag, p.RecentPlayer.Titles)
	}
	fmt.Println(err)
	// Output:
	// Cy [1234567890]
	// <nil>
}

func ExampleUser_GetTitleHistory() {
	me := ada()
	titles, err := me.GetTitleHistory(context.Background(), me.XUID(), 5)
	for _, t := range titles {
		fmt.Println(t.TitleID, t.TitleHistory.LastTimePlayed, t.Achievement.CurrentGamerscore)
	}
	fmt.Println(err)
	// Output:
	// 1234567890 2025-06-01T18:30:00.0000000Z 10
	// 1717113201 2025-05-01T12:00:00.0000000Z 0
	// <nil>
}

func ExampleUser_GetTitle() {
	t, err := ada().GetTitle(context.Background(), "1234567890")
	fmt.Println(t.ServiceConfigID, t.Achievement.CurrentAchievements, t.Achievement.TotalAchievements, err)
	// Output:
	// 00000000-0000-0000-0000-0000499602d2 1 5 <nil>
}

func ExampleUser_GetAchievementHistory() {
	me := ada()
	page, err := me.GetAchievementHistory(context.Background(), me.XUID(), 10, "")
	for _, t := range page.Items {
		fmt.Println(t.TitleID, t.EarnedAchievements, t.CurrentGamerscore)
	}
	fmt.Println(page.TotalCount, err)
	// Output:
	// 1234567890 1 10
	// 1717113201 0 0
	// 2 <nil>
}

func ExampleUser_SearchUsers() {
	found, err := ada().SearchUsers(context.Background(), "y")
	for _, u := range found {
		fmt.Println(u.Gamertag, u.XUID)
	}
	fmt.Println(err)
	// Output:
	// Cy 2533274792000002
	// <nil>
}

// A gamertag to its XUID: the profile addressed by gamertag.
func ExampleUser_GetProfileByGamertag() {
	p, err := ada().GetProfileByGamertag(context.Background(), "bo", []string{"Gamertag", "AccountTier"})
	fmt.Println(p.XUID, p.Settings["Gamertag"], p.Settings["AccountTier"], err)
	// Output:
	// 2533274792000001 Bo Silver <nil>
}
