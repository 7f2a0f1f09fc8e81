package transport_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/xblgo/fgrl/hresult"
	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/throttle"
	"github.com/xblgo/fgrl/transport"
)

// The eleventh profile call in a burst never reaches the service: the local
// budget refuses it (retries and waits are off here, so the example does
// not sleep for the 16 s the budget would otherwise wait).
func Example() {
	client := &http.Client{Transport: &transport.Transport{
		Base:        mock.NewHandler(), // in-process mock; in production, leave nil
		TitleID:     "1234567890",
		RetryWindow: -1,
	}}
	for i := 1; i <= 11; i++ {
		req, _ := http.NewRequest("GET", "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag", nil)
		req.Header.Set("Authorization", mock.Token("2533274791234567", "1234567890"))
		resp, err := client.Do(req)
		if err != nil {
			var te *transport.ThrottleError
			fmt.Println(i, errors.Is(err, hresult.HTTP_E_STATUS_429_TOO_MANY_REQUESTS), errors.As(err, &te) && te.Local)
			continue
		}
		resp.Body.Close()
	}
	// Output: 11 true true
}

// A poller paced at the planner's interval (xblcall limits plan): the
// ticker never ticks faster, and waits longer when the key's budget runs
// low. Here social at an interval of 20 ms, three ticks.
func ExampleTransport_NewTicker() {
	tr := &transport.Transport{Base: mock.NewHandler(), TitleID: "1234567890"}
	tk, err := tr.NewTicker(throttle.Key{User: mock.UserHash("2533274791234567"), Scope: "social"}, 20*time.Millisecond)
	if err != nil {
		panic(err)
	}
	defer tk.Stop()
	client := &http.Client{Transport: tr}
	for i := range 3 {
		<-tk.C
		req, _ := http.NewRequest("GET", "https://social.xboxlive.com/users/me/people", nil)
		req.Header.Set("Authorization", mock.Token("2533274791234567", "1234567890"))
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			fmt.Println("tick", i+1, resp.StatusCode)
		}
	}
	// Output:
	// tick 1 200
	// tick 2 200
	// tick 3 200
}

// A background job's calls leave a quarter of each key's limits to the
// interactive calls of the same user and service: social allows 10 calls in
// 15 s, and background calls stop at 7 (FailFast here, so the example does
// not wait; a real job would wait with Policy.MaxWait).
func ExampleBackground() {
	client := &http.Client{Transport: &transport.Transport{Base: mock.NewHandler(), TitleID: "1234567890"}}
	call := func(ctx context.Context) string {
		req, _ := http.NewRequestWithContext(ctx, "GET", "https://social.xboxlive.com/users/me/people", nil)
		req.Header.Set("Authorization", mock.Token("2533274791234567", "1234567890"))
		resp, err := client.Do(req)
		if err != nil {
			return "refused"
		}
		resp.Body.Close()
		return strconv.Itoa(resp.StatusCode)
	}
	job := transport.WithPolicy(context.Background(), transport.Policy{Priority: transport.Background, FailFast: true})
	var got []string
	for range 8 {
		got = append(got, call(job))
	}
	fmt.Println("background:", got)
	ctx := context.Background()
	fmt.Println("interactive:", call(ctx), call(ctx), call(ctx))
	// Output:
	// background: [200 200 200 200 200 200 200 refused]
	// interactive: 200 200 200
}

// With CoalesceReads, identical reads of one user made together share one
// request, and with ReadCacheTTL a read repeated within it is answered from
// memory: the second profile read here sends nothing.
func Example_coalesceReads() {
	tr := &transport.Transport{Base: mock.NewHandler(), TitleID: "1234567890", CoalesceReads: true, ReadCacheTTL: 5 * time.Second}
	client := &http.Client{Transport: tr}
	for range 2 {
		req, _ := http.NewRequest("GET", "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag", nil)
		req.Header.Set("Authorization", mock.Token("2533274791234567", "1234567890"))
		resp, err := client.Do(req)
		if err != nil {
			panic(err)
		}
		resp.Body.Close()
		fmt.Println(resp.StatusCode)
	}
	fmt.Println("sent:", tr.Stats().Attempts, "coalesced:", tr.Stats().Coalesced)
	// Output:
	// 200
	// 200
	// sent: 1 coalesced: 1
}

// A service that applies profile 6 / 30 where the limits data say 10 / 30:
// a user's first 429 body (maxRequests 6 in 15 s) becomes that user's
// burst, and the transport refuses the user's next call locally instead of
// collecting another 429. When a second user's 429 reports the same limit,
// it is confirmed for every user of the scope.
func ExampleTransport_LearnedLimits() {
	served, _ := limits.Read(strings.NewReader(`{"rules": [{"service": "profile", "hosts": ["profile.xboxlive.com"], "burst": 6, "sustain": 30}]}`))
	h, _ := mock.New(mock.Config{Limits: served})
	tr := &transport.Transport{Base: h, TitleID: "1234567890", RetryWindow: -1} // no waits in the example
	client := &http.Client{Transport: tr}
	calls := func(xuid string, n int) {
		for range n {
			req, _ := http.NewRequest("GET", "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag", nil)
			req.Header.Set("Authorization", mock.Token(xuid, "1234567890"))
			if resp, err := client.Do(req); err == nil {
				resp.Body.Close()
			}
		}
	}
	show := func() {
		for _, l := range tr.LearnedLimits() {
			who := "every user"
			if l.User != "" {
				who = "one user"
			}
			fmt.Printf("%s %s for %s: %d (table %d)\n", l.Scope, l.Period, who, l.Learned, l.Table)
		}
	}
	calls("2533274791234567", 8)
	show()
	calls("2533274797654321", 8)
	show()
	fmt.Println("server 429s:", tr.Stats().Server429s)
	// Output:
	// profile burst for one user: 6 (table 10)
	// profile burst for every user: 6 (table 10)
	// server 429s: 2
}
