package transport

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/xblgo/fgrl/mock"
)

// TestSecretsNeverLogged exercises every logged path (retries, waits, local
// refusals, server 429s, the cache's fail-fast, a failed refresh) with a
// token and a Signature on the request: neither may appear in a log record
// or an error.
func TestSecretsNeverLogged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs logBuffer
		h := mock.NewHandler(mock.WithFaults(mock.Faults{ErrorRate: 0.3, Seed: 3}))
		tr := &Transport{Base: h, TitleID: title, Logger: slog.New(slog.NewJSONHandler(&logs, nil)),
			RefreshToken: func(*http.Request) (string, error) { return "", errors.New("no refresh") }}
		xbl := &Transport{Base: h, TitleID: title, DisableBudget: true, Logger: slog.New(slog.NewJSONHandler(&logs, nil))}
		tok := mock.Token(xuid1, title)
		secret := tok[strings.Index(tok, ";")+1:]
		const sig = "AAAAAQHaSignatureSecret"
		var errs []string
		for _, rt := range []*Transport{tr, xbl} {
			for i := 0; i < 40; i++ {
				req, _ := http.NewRequestWithContext(context.Background(), "GET", profileURL, nil)
				req.Header.Set("Authorization", tok)
				req.Header.Set("Signature", sig)
				if resp, err := rt.RoundTrip(req); err != nil {
					errs = append(errs, err.Error())
				} else {
					resp.Body.Close()
				}
			}
		}
		out := logs.String() + strings.Join(errs, "\n")
		if !strings.Contains(out, "refused") || !strings.Contains(out, "retry") {
			t.Fatalf("the run did not exercise refusals and retries:\n%.2000s", out)
		}
		for _, s := range []string{secret, sig} {
			if strings.Contains(out, s) {
				t.Errorf("%q appears in logs or errors", s)
			}
		}
	})
}
