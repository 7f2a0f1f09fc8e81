package mocktest_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/mock/mocktest"
	"github.com/xblgo/fgrl/throttle"
	"github.com/xblgo/fgrl/transport"
)

const (
	xuid     = "2533274790000001"
	title    = "1234567890"
	presence = "https://userpresence.xboxlive.com/users/xuid(" + xuid + ")"
)

// recorder stands for a test: it keeps what the assertions report.
type recorder struct {
	testing.TB
	failures []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}

func get(t *testing.T, c *http.Client, url string) int {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", mock.Token(xuid, title))
	resp, err := c.Do(req)
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestThreeAnswers: a script plays three answers in sequence, and the test
// asserts how often the call was made.
func TestThreeAnswers(t *testing.T) {
	s, err := mock.ReadScript(strings.NewReader(`
rules:
  - match: {host: userpresence.xboxlive.com}
    then: mock
    answers: [{status: 503}, {status: 500}, {status: 200, body: {state: Away}}]
`))
	if err != nil {
		t.Fatal(err)
	}
	h := mock.Must(mock.New(mock.Config{Script: s}))
	c := &http.Client{Transport: h}
	var got []int
	for range 4 {
		got = append(got, get(t, c, presence))
	}
	if fmt.Sprint(got) != "[503 500 200 200]" {
		t.Errorf("answers %v, want 503, 500, 200 then the mock's own 200", got)
	}
	mocktest.Called(t, h, mock.CallFilter{Host: "userpresence.xboxlive.com", Script: "*"}, 3)
	mocktest.NoThrottled(t, h)
}

// TestPresenceOutage rehearses a two-minute presence outage with 429s:
// code that waits out Retry-After (the transport, as XSAPI does) calls no
// sooner than told and is back when the outage ends; code that ignores
// the 429 fails certification, with the analyzer's finding in the message.
func TestPresenceOutage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		outage := mock.Faults{Services: []mock.ServiceFault{{Service: "presence", Status: 429,
			RetryAfter: throttle.Duration(30 * time.Second), For: throttle.Duration(2 * time.Minute)}}}
		// Code that honours Retry-After: the transport.
		h := mock.Must(mock.New(mock.Config{Faults: outage}))
		h.SetFaults(outage) // starts the two minutes now
		good := &http.Client{Transport: &transport.Transport{Base: h, TitleID: title}}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", presence, nil)
		req.Header.Set("Authorization", mock.Token(xuid, title))
		for range 6 { // once every 30 s, as told
			if resp, err := good.Do(req); err == nil {
				resp.Body.Close()
			}
			time.Sleep(30 * time.Second)
		}
		// It waited out every Retry-After and came back when the outage
		// ended: four 429s, 30 s apart, then presence again.
		calls := h.Calls(mock.CallFilter{Scope: "presence"})
		var got []string
		for i, c := range calls {
			gap := time.Duration(0)
			if i > 0 {
				gap = c.Time.Sub(calls[i-1].Time)
			}
			got = append(got, fmt.Sprintf("%d after %v", c.Status, gap))
		}
		if want := "[429 after 0s 429 after 30s 429 after 30s 429 after 30s 200 after 30s 200 after 30s]"; fmt.Sprint(got) != want {
			t.Errorf("calls in the outage: %v, want %s", got, want)
		}

		// Code that ignores the 429 and calls again at once.
		h = mock.Must(mock.New(mock.Config{}))
		h.SetFaults(outage)
		for range 5 {
			get(t, &http.Client{Transport: h}, presence)
		}
		var r recorder
		mocktest.Certifiable(&r, h)
		mocktest.NoThrottled(&r, h)
		text := strings.Join(r.failures, "\n")
		if !strings.Contains(text, "certification: throttled-calls presence/read:") || !strings.Contains(text, "429: GET "+presence) {
			t.Errorf("ignoring a 429 did not fail as it should:\n%s", text)
		}
	})
}
