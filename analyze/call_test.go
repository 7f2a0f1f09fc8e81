package analyze

import (
	"bytes"
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

// TestReadersCutCalls: every reader gives calls whose strings are within
// their bounds, whatever the trace holds: a URL of 100 KiB is cut to
// MaxURL, a method, Retry-After and event name of 1 KiB to 256 bytes (a
// 503's Retry-After: a 429's is one value of at most 256 bytes, or the
// entry is a problem, TestAtkRetryAfterListFailsClosed).
// Before, a URL was kept as long as the reader read it (384 KiB of a JSON
// string, 1 MiB of a .saz request line), and each group kept its host as
// a part of it.
func TestReadersCutCalls(t *testing.T) {
	long := strings.Repeat("u", 100<<10)
	word := strings.Repeat("W", 1<<10)
	url := "https://profile.xboxlive.com/" + long
	har := harHead + `{"startedDateTime": "2026-03-01T20:00:00Z", "request": {"method": "` + word + `", "url": "` + url + `"},
		"response": {"status": 503, "headers": [{"name": "Retry-After", "value": "` + word + `"}]}}]}}`
	saz := stored(t, [][2]string{{"raw/1_c.txt", word + " " + url + " HTTP/1.1\r\nHost: profile.xboxlive.com\r\n\r\n"},
		{"raw/1_s.txt", "HTTP/1.1 503 X\r\nRetry-After: " + word + "\r\nContent-Length: 0\r\n\r\n"}, {"raw/1_m.xml", timers("2026-03-01T20:00:00Z")}})
	csv := csvHdr + `"",` + `"` + url + `","1","","","","Retry-After: ` + word + `","","503","1","2026-03-01T20:00:00Z","true","1","false","0","","true","` + word + `"` + "\n"
	data := `[{"Endpoint": "", "Calls": [{"Uri": "` + url + `", "ResponseHeaders": "Retry-After: ` + word + `", "HttpStatusCode": 503, "ReqTimeUTC": ` +
		fileTimeJSON(t0) + `, "IsInGameEvent": true, "EventName": "` + word + `"}]}]`
	for name, read := range map[string]func(func(*Call)) (Input, error){
		"HAR":       func(add func(*Call)) (Input, error) { return ReadHAR(strings.NewReader(har), add) },
		".saz":      func(add func(*Call)) (Input, error) { return ReadSAZ(bytes.NewReader(saz), int64(len(saz)), add) },
		"CSV data":  func(add func(*Call)) (Input, error) { return ReadData(strings.NewReader(csv), add) },
		"JSON data": func(add func(*Call)) (Input, error) { return ReadData(strings.NewReader(data), add) },
	} {
		var calls []Call
		in, err := read(func(c *Call) { calls = append(calls, *c) })
		if err != nil || len(calls) != 1 || !in.Complete() {
			t.Fatalf("%s: %v, %d calls, %+v", name, err, len(calls), in)
		}
		c := calls[0]
		if len(c.URL) > MaxURL || !strings.HasPrefix(c.URL, "https://profile.xboxlive.com/uuu") || len(c.Method) > 256 || len(c.RetryAfter) > 256 || len(c.InGameEvent) > 256 ||
			c.RetryAfter == "" {
			t.Errorf("%s: URL %d bytes (%.40q), method %d, Retry-After %d, event %d; want at most %d, 256, 256 and 256",
				name, len(c.URL), c.URL, len(c.Method), len(c.RetryAfter), len(c.InGameEvent), MaxURL)
		}
	}
}
