package transport

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"testing/synctest"
)

// TestLoggedErrorsRedactURLs: a Base that fails as http.Client does, its
// error quoting the request's URL (here with an access_token in the query
// and a password in the user info), has the URL logged redacted, as
// xblauth.RedactURL shows URLs: the credentials never reach the log.
func TestLoggedErrorsRedactURLs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs logBuffer
		failing := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return nil, &url.Error{Op: "Get", URL: r.URL.String(), Err: errors.New("connection refused")}
		})
		tr := &Transport{Base: failing, TitleID: title, Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
		req, _ := http.NewRequestWithContext(context.Background(), "GET", "https://user:PASSWORD-SECRET@profile.xboxlive.com/users/me/profile/settings?access_token=QUERY-SECRET&settings=Gamertag", nil)
		if _, err := tr.RoundTrip(req); err == nil {
			t.Fatal("a failing Base's call succeeded")
		}
		out := logs.String()
		if !strings.Contains(out, "connection refused") || !strings.Contains(out, "profile.xboxlive.com/users/me") {
			t.Fatalf("the log does not say the failure:\n%s", out)
		}
		for _, s := range []string{"QUERY-SECRET", "PASSWORD-SECRET"} {
			if strings.Contains(out, s) {
				t.Errorf("the log holds %q:\n%s", s, out)
			}
		}
	})
}
