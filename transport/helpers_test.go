package transport

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock"
)

const (
	xuid1      = "2533274791234567"
	xuid2      = "2533274799999999"
	title      = "1234567890"
	profileURL = "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag"
)

// script is an in-process base that answers from a list of canned
// responses and records what it received.
type script struct {
	mu      sync.Mutex
	answers []func(w http.ResponseWriter)
	bodies  []string
	times   []time.Time
}

func (s *script) RoundTrip(req *http.Request) (*http.Response, error) {
	s.mu.Lock()
	var b []byte
	if req.Body != nil {
		b, _ = io.ReadAll(req.Body)
		req.Body.Close()
	}
	s.bodies = append(s.bodies, string(b))
	s.times = append(s.times, time.Now())
	i := len(s.bodies) - 1
	s.mu.Unlock()
	rec := httptest.NewRecorder()
	if i < len(s.answers) {
		s.answers[i](rec)
	} else {
		rec.WriteHeader(200)
	}
	resp := rec.Result()
	resp.Request = req
	return resp, nil
}

func (s *script) calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.bodies)
}

func answer(status int, retryAfter string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		w.WriteHeader(status)
		if status == 429 {
			io.WriteString(w, `{"version":1,"currentRequests":11,"maxRequests":10,"periodInSeconds":15,"limitType":"Rate"}`)
		}
	}
}

// get sends one GET through rt as user xuid.
func get(t *testing.T, rt http.RoundTripper, ctx context.Context, url, xuid string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", mock.Token(xuid, title))
	resp, err := rt.RoundTrip(req)
	if resp != nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return resp, err
}

// statusCounter wraps a base and counts answers by status (only those
// before until, when it is set).
type statusCounter struct {
	base  http.RoundTripper
	until time.Time
	mu    sync.Mutex
	n     map[int]int
}

func (s *statusCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := s.base.RoundTrip(req)
	if err == nil && (s.until.IsZero() || time.Now().Before(s.until)) {
		s.mu.Lock()
		if s.n == nil {
			s.n = map[int]int{}
		}
		s.n[resp.StatusCode]++
		s.mu.Unlock()
	}
	return resp, err
}

func (s *statusCounter) count(status int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n[status]
}

// logBuffer collects log output for redaction checks.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
