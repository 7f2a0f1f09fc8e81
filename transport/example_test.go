package transport_test

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/xblgo/fgrl/hresult"
	"github.com/xblgo/fgrl/mock"
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
