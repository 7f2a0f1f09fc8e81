package har

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/xblgo/fgrl/analyze"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// read reads a HAR document back with analyze.ReadHAR.
func read(t *testing.T, b []byte) []analyze.Call {
	t.Helper()
	var out []analyze.Call
	in, err := analyze.ReadHAR(bytes.NewReader(b), func(c *analyze.Call) {
		cp := *c
		cp.RequestBody, cp.ResponseBody = bytes.Clone(c.RequestBody), bytes.Clone(c.ResponseBody)
		cp.Offset = 0 // where its entry starts in the HAR, not a part of the call written
		out = append(out, cp)
	})
	if err != nil || in.ProblemCount > 0 || in.Truncated != "" {
		t.Fatalf("read back: %v %+v", err, in)
	}
	return out
}

func TestRoundTrip(t *testing.T) {
	in := []analyze.Call{
		{Time: t0, Duration: 12 * time.Millisecond, Method: "GET", URL: "https://profile.xboxlive.com/users/me",
			Authorization: "XBL3.0 x=123;secret", Status: 200, ResponseBody: []byte(`{"a":1}`)},
		{Index: 1, Time: t0.Add(time.Second), Method: "POST", URL: "https://a/b", Status: 429, RetryAfter: "12",
			RequestBody: []byte(`{"userIds":["1"]}`)},
	}
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for i := range in {
		if err := w.Write(entryOf(&in[i])); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(entryOf(&in[0])); err == nil {
		t.Error("Write after Close succeeded")
	}
	if strings.Contains(buf.String(), "secret") {
		t.Fatalf("HAR holds a secret:\n%s", buf.String())
	}
	want := append([]analyze.Call(nil), in...)
	want[0].Authorization = "XBL3.0 x=123;REDACTED"
	if diff := cmp.Diff(want, read(t, buf.Bytes()), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

// TestRecorderToFile: analyze.Recorder feeding a Writer, as simulate --har
// does.
func TestRecorderToFile(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "5")
		w.WriteHeader(429)
		w.Write([]byte(`{"limitType":"Rate"}`))
	}))
	defer srv.Close()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	rec := &analyze.Recorder{Now: func() time.Time { return t0 }, Add: func(c *analyze.Call) { w.Write(entryOf(c)) }}
	req, _ := http.NewRequest("GET", srv.URL+"/x", nil)
	req.Host = "profile.xboxlive.com"
	req.Header.Set("Authorization", "XBL3.0 x=1;secret")
	resp, err := rec.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(resp.Body)
	resp.Body.Close()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want := []analyze.Call{{Time: t0, Method: "GET", URL: "http://profile.xboxlive.com/x", Authorization: "XBL3.0 x=1;REDACTED",
		Status: 429, RetryAfter: "5", ResponseBody: []byte(`{"limitType":"Rate"}`)}}
	if diff := cmp.Diff(want, read(t, buf.Bytes()), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("recorded (-want +got):\n%s", diff)
	}
}

// entryOf is a recorded call as an entry.
func entryOf(c *analyze.Call) *Entry {
	return &Entry{Time: c.Time, Duration: c.Duration, Method: c.Method, URL: c.URL, Authorization: c.Authorization,
		RequestBody: c.RequestBody, Status: c.Status, RetryAfter: c.RetryAfter, ResponseBody: c.ResponseBody}
}

// TestWriterRedactsSecrets: whatever an entry holds, the HAR holds no
// secret: a sign-in service's code in the URL, its form body's refresh
// token and client secret, its answer's tokens, and a token in a service's
// query.
func TestWriterRedactsSecrets(t *testing.T) {
	in := []analyze.Call{
		{Time: t0, Method: "GET", URL: "https://login.live.com/oauth20_desktop.srf?code=SECRET1&lc=1033", Status: 200},
		{Time: t0, Method: "POST", URL: "https://login.live.com/oauth20_token.srf", Status: 200,
			RequestBody:  []byte("grant_type=refresh_token&client_id=c&refresh_token=SECRET2&client_secret=SECRET3"),
			ResponseBody: []byte(`{"token_type": "bearer", "expires_in": 3600, "access_token": "SECRET4", "refresh_token": "SECRET5"}`)},
		{Time: t0, Method: "POST", URL: "https://xsts.auth.xboxlive.com/xsts/authorize", Status: 200,
			RequestBody:  []byte(`{"RelyingParty": "http://xboxlive.com", "Properties": {"UserTokens": ["SECRET6"]}}`),
			ResponseBody: []byte(`{"Token": "SECRET7", "DisplayClaims": {"xui": [{"uhs": "123"}]}}`)},
		{Time: t0, Method: "GET", URL: "https://profile.xboxlive.com/users/me?access_token=SECRET8", Status: 200},
	}
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for i := range in {
		if err := w.Write(entryOf(&in[i])); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "SECRET") {
		t.Fatalf("the HAR holds a secret:\n%s", buf.String())
	}
	got := read(t, buf.Bytes())
	want := []string{
		"https://login.live.com/oauth20_desktop.srf?code=REDACTED&lc=REDACTED",
		"https://login.live.com/oauth20_token.srf grant_type=refresh_token&client_id=c&refresh_token=REDACTED&client_secret=REDACTED " +
			`{"token_type": "bearer", "expires_in": 3600, "access_token": "REDACTED", "refresh_token": "REDACTED"}`,
		`https://xsts.auth.xboxlive.com/xsts/authorize {"RelyingParty": "http://xboxlive.com", "Properties": {"UserTokens": ["REDACTED"]}} ` +
			`{"Token": "REDACTED", "DisplayClaims": {"xui": [{"uhs": "123"}]}}`,
		"https://profile.xboxlive.com/users/me?access_token=REDACTED",
	}
	var gotText []string
	for _, c := range got {
		gotText = append(gotText, strings.TrimSpace(c.URL+" "+string(c.RequestBody)+" "+string(c.ResponseBody)))
	}
	if diff := cmp.Diff(want, gotText); diff != "" {
		t.Errorf("read back (-want +got):\n%s", diff)
	}
}

// TestWriterDropsURLPasswordsAndForgedUserhashes: secrets an entry holds
// where no secret belongs are written redacted too: a password in the
// URL's user info (analyze.Recorder builds its URL with url.URL.String,
// which keeps it) is dropped, and a token written where the userhash goes
// ("XBL3.0 x=<token>;...") replaces the whole header, since only a
// userhash (xblauth.UserHash: 1 to 20 digits) is kept.
func TestWriterDropsURLPasswordsAndForgedUserhashes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		entry  Entry
		secret string
	}{
		{"a password in the URL", Entry{Time: t0, Method: "GET", URL: "https://u:pw-SECRET@profile.xboxlive.com/users/me", Status: 200}, "pw-SECRET"},
		{"a token in the userhash's place", Entry{Time: t0, Method: "GET", URL: "https://profile.xboxlive.com/users/me",
			Authorization: "XBL3.0 x=eyJ-token-SECRET;x", Status: 200}, "eyJ-token-SECRET"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			w := NewWriter(&b)
			if err := w.Write(&tc.entry); err != nil {
				t.Fatal(err)
			}
			w.Close()
			if bytes.Contains(b.Bytes(), []byte(tc.secret)) {
				t.Errorf("the HAR holds %q:\n%s", tc.secret, b.Bytes())
			}
		})
	}
}
