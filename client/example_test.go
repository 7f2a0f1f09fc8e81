package client_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/xblgo/fgrl/client"
	"github.com/xblgo/fgrl/hresult"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/transport"
)

func Example() {
	c, err := client.New(client.Config{
		TitleID: "1234567890",
		Tokens: client.StaticTokens{
			"2533274791234567": mock.Token("2533274791234567", "1234567890"),
		},
		// In production leave Transport nil; here the in-process mock
		// answers, with waits off so the example never sleeps.
		Transport: &transport.Transport{Base: mock.NewHandler(), TitleID: "1234567890", RetryWindow: -1},
	})
	if err != nil {
		panic(err)
	}
	me := c.As("2533274791234567")
	profiles, err := me.GetProfiles(context.Background(), []string{"2533274791234567"}, []string{"Gamertag"})
	fmt.Println(profiles[0].Settings["Gamertag"], err)

	// Profile allows 10 calls per 15 s: the 11th is refused locally.
	for i := 0; i < 10; i++ {
		_, err = me.GetProfiles(context.Background(), []string{"2533274791234567"}, nil)
	}
	var e *client.Error
	var te *transport.ThrottleError
	if errors.As(err, &e) && errors.As(err, &te) && errors.Is(err, hresult.HTTP_E_STATUS_429_TOO_MANY_REQUESTS) {
		fmt.Println(e.API, e.HRESULT(), "local:", te.Local)
	}
	// Output:
	// MockPlayer <nil>
	// GetProfiles 0x801901AD HTTP_E_STATUS_429_TOO_MANY_REQUESTS local: true
}

func ExampleUser_AllAchievements() {
	c, _ := client.New(client.Config{
		TitleID:   "1234567890",
		Tokens:    client.StaticTokens{"2533274791234567": mock.Token("2533274791234567", "1234567890")},
		Transport: mock.NewHandler(),
	})
	for a, err := range c.As("2533274791234567").AllAchievements(context.Background(), "2533274791234567", "1234567890", 2) {
		if err != nil {
			fmt.Println(err)
			break
		}
		fmt.Println(a.ID, a.Name, a.ProgressState)
	}
	// Output:
	// 1 Achievement 1 NotStarted
	// 2 Achievement 2 NotStarted
	// 3 Achievement 3 NotStarted
	// 4 Achievement 4 NotStarted
	// 5 Achievement 5 NotStarted
}

// With a BatchWindow, single-user lookups one user makes together go out as
// one batch call: three GetProfile calls here send one request.
func ExampleConfig_batchWindow() {
	tr := &transport.Transport{Base: mock.NewHandler(), TitleID: "1234567890"}
	c, err := client.New(client.Config{
		TitleID:     "1234567890",
		Tokens:      client.StaticTokens{"2533274791234567": mock.Token("2533274791234567", "1234567890")},
		Transport:   tr,
		BatchWindow: 50 * time.Millisecond,
	})
	if err != nil {
		panic(err)
	}
	me := c.As("2533274791234567")
	var wg sync.WaitGroup
	tags := make([]string, 3)
	for i, xuid := range []string{"2533274790000001", "2533274790000002", "2533274790000003"} {
		wg.Go(func() {
			p, err := me.GetProfile(context.Background(), xuid, []string{"Gamertag"})
			if err == nil {
				tags[i] = p.Settings["Gamertag"]
			}
		})
	}
	wg.Wait()
	fmt.Println(tags, "requests:", tr.Stats().Attempts)
	// Output:
	// [Player0001 Player0002 Player0003] requests: 1
}
