package transport_test

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/xblgo/fgrl/hresult"
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
