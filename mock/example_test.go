package mock_test

import (
	"fmt"
	"net/http"
	"time"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/throttle"
)

// An eleventh profile call within 15 s is refused: the profile burst limit
// is 10. The mock's clock is fixed here so the Retry-After is exact.
func Example() {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	h := mock.Must(mock.New(mock.Config{Now: func() time.Time { return now }}))
	client := &http.Client{Transport: h} // in-process: no socket
	var resp *http.Response
	for i := 0; i < 11; i++ {
		req, _ := http.NewRequest("GET", "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag", nil)
		req.Header.Set("Authorization", mock.Token("2533274791234567", "1234567890"))
		var err error
		if resp, err = client.Do(req); err != nil {
			panic(err)
		}
		resp.Body.Close()
	}
	fmt.Println(resp.StatusCode, "Retry-After:", resp.Header.Get("Retry-After"))
	d, _ := h.Counts(throttle.Key{User: mock.UserHash("2533274791234567"), Title: "1234567890", Scope: "profile"})
	fmt.Println(d.Burst.Count, d.Burst.Limit)
	// Output:
	// 429 Retry-After: 15
	// 11 10
}

func ExampleNewServer() {
	s := mock.NewServer(nil)
	defer s.Close()
	req, _ := http.NewRequest("GET", "https://social.xboxlive.com/users/me/people", nil)
	req.Header.Set("Authorization", mock.Token("2533274791234567", "1234567890"))
	resp, err := s.Client().Do(req)
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	fmt.Println(resp.StatusCode, resp.Header.Get("RateLimit-Policy"))
	// Output: 200 "burst";q=10;w=15, "sustain";q=30;w=300
}
