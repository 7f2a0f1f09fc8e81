package transport

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// held: Event's godoc: "It names the service, never the user: no
// userhash, token or XUID", and Transport.Logger's: "Tokens are never
// logged." (the log names the userhash: observe.go "Only the userhash
// names the user"). Eight callers of one token share reads over a loopback server
// (the leader's answer cut mid-body, so that its error goes to its
// followers; a 503; then a 200 shared and cached); neither the Logger's
// records, nor the Observe hook's events, nor any error text a caller got
// holds the token or its userhash.
func TestAttack80CoalSecretsStayOutOfEventsLogsErrors(t *testing.T) {
	const (
		userhash = "7777123456789012345"
		token    = "eyJtokenSECRETxyzzy0123456789abcdefABCDEF"
	)
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(100 * time.Millisecond) // let the followers join
		switch n.Add(1) {
		case 1: // declared 100 bytes, sends 5: the leader's read fails
			w.Header().Set("Content-Length", "100")
			io.WriteString(w, "short")
		case 2:
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			io.WriteString(w, `{"ok":true}`)
		}
	}))
	defer srv.Close()

	var logs bytes.Buffer
	var mu sync.Mutex
	var events []string
	tr := &Transport{TitleID: "1234567890", CoalesceReads: true, ReadCacheTTL: 5 * time.Second, DisableBudget: true, RetryWindow: -1,
		Logger: slog.New(slog.NewTextHandler(&syncWriter{w: &logs, mu: &mu}, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Observe: func(_ context.Context, e Event) {
			mu.Lock()
			events = append(events, fmt.Sprintf("%+v %v", e, e.Err))
			mu.Unlock()
		}}
	var errs []string
	for round := range 4 {
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, srv.URL+"/users/xuid(2533274800000000)/profile", nil)
				req.Header.Set("Authorization", "XBL3.0 x="+userhash+";"+token)
				resp, err := tr.RoundTrip(req)
				if err == nil {
					_, err = io.ReadAll(resp.Body)
					resp.Body.Close()
				}
				if err != nil {
					mu.Lock()
					errs = append(errs, fmt.Sprintf("round %d: %v", round, err))
					mu.Unlock()
				}
			})
		}
		wg.Wait()
	}
	mu.Lock()
	defer mu.Unlock()
	if len(errs) == 0 {
		t.Error("no caller saw an error: the cut answer did not reach anyone")
	}
	for _, secret := range []string{token, token[:16]} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("%q reached the logs:\n%s", secret, logs.String())
		}
	}
	eventsAndErrs := strings.Join(events, "\n") + strings.Join(errs, "\n")
	for _, secret := range []string{token, token[:16], userhash, "2533274800000000"} {
		if strings.Contains(eventsAndErrs, secret) {
			t.Errorf("%q reached the events or errors:\n%s", secret, eventsAndErrs)
		}
	}
	t.Logf("%d log bytes, %d events, %d errors, %d requests; first error: %s", logs.Len(), len(events), len(errs), n.Load(), errs[0])
}

type syncWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
