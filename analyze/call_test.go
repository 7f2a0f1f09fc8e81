package analyze

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestRecorderKeepsNoSecret: the calls a Recorder keeps hold no sign-in
// secret: neither the refresh token and client secret sent, nor the tokens
// answered, nor a code, a token or a password in a URL.
func TestRecorderKeepsNoSecret(t *testing.T) {
	rec := &Recorder{Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{}, Request: r,
			Body: io.NopCloser(strings.NewReader(`{"token_type": "bearer", "access_token": "SECRET1", "refresh_token": "SECRET2"}`))}, nil
	})}
	for _, req := range []*http.Request{
		mustRequest(t, "POST", "https://login.live.com/oauth20_token.srf", "grant_type=refresh_token&refresh_token=SECRET3&client_secret=SECRET4"),
		mustRequest(t, "GET", "https://login.live.com/oauth20_desktop.srf?code=SECRET5", ""),
		mustRequest(t, "GET", "https://u:SECRET6@profile.xboxlive.com/users/me?access_token=SECRET7", ""),
	} {
		resp, err := rec.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	var got []string
	for _, c := range rec.Calls() {
		got = append(got, c.URL+" "+string(c.RequestBody)+" "+string(c.ResponseBody))
	}
	answer := `{"token_type": "bearer", "access_token": "REDACTED", "refresh_token": "REDACTED"}`
	want := []string{
		"https://login.live.com/oauth20_token.srf grant_type=refresh_token&refresh_token=REDACTED&client_secret=REDACTED " + answer,
		"https://login.live.com/oauth20_desktop.srf?code=REDACTED  " + answer,
		"https://profile.xboxlive.com/users/me?access_token=REDACTED  " + answer,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("recorded (-want +got):\n%s", diff)
	}
}

func mustRequest(t *testing.T, method, url, body string) *http.Request {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	return req
}
