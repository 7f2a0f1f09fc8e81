package mock_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
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

// New refuses a configuration it could not honour, saying why.
func ExampleNew() {
	_, err := mock.New(mock.Config{Faults: mock.Faults{ErrorRate: 0.8, ResetRate: 0.5}})
	fmt.Println(err)
	// Output: mock: fault rates must be fractions from 0 to 1 adding up to at most 1 (error 0.8, reset 0.5, truncate 0)
}

// A script plays answers in sequence, then lets the mock answer.
func ExampleReadScript() {
	s, err := mock.ReadScript(strings.NewReader(`
rules:
  - match: {host: userpresence.xboxlive.com}
    then: mock
    answers: [{status: 503}, {status: 500}, {status: 200, body: {state: Away}}]
`))
	if err != nil {
		panic(err)
	}
	h := mock.Must(mock.New(mock.Config{Script: s}))
	for range 4 {
		req, _ := http.NewRequest("GET", "https://userpresence.xboxlive.com/users/me", nil)
		req.Header.Set("Authorization", mock.Token("2533274791234567", "1234567890"))
		resp, _ := h.RoundTrip(req)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Println(strings.TrimSpace(fmt.Sprint(resp.StatusCode, " ", string(b[:min(len(b), 30)]))))
	}
	// Output:
	// 503
	// 500
	// 200 {"state":"Away"}
	// 200 {"xuid":"2533274791234567","st
}

// An outage of one service: presence answers 429 for two minutes, and
// the rest of the services as usual.
func ExampleHandler_SetFaults() {
	h := mock.NewHandler()
	err := h.SetFaults(mock.Faults{Services: []mock.ServiceFault{{Service: "presence", Status: 429,
		RetryAfter: throttle.Duration(30 * time.Second), For: throttle.Duration(2 * time.Minute)}}})
	fmt.Println(err)
	for _, url := range []string{"https://userpresence.xboxlive.com/users/me", "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag"} {
		req, _ := http.NewRequest("GET", url, nil)
		req.Header.Set("Authorization", mock.Token("2533274791234567", "1234567890"))
		resp, _ := h.RoundTrip(req)
		resp.Body.Close()
		fmt.Println(strings.TrimSpace(fmt.Sprint(resp.StatusCode, " ", resp.Header.Get("Retry-After"))))
	}
	// Output:
	// <nil>
	// 429 30
	// 200
}
