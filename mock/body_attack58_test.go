package mock_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock"
)

// Outside attacks (attack58) on the mock's body bound: Config.MaxBody,
// call.decode and the pipeline's Content-Length check.

const (
	attack58A     = "2533274791234567"
	attack58B     = "2533274799999999"
	attack58Title = "1234567890"
	attack58Batch = "https://profile.xboxlive.com/users/batch/profile/settings"
	attack58Read  = "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag"
)

// attack58Padded is a profile batch body padded with spaces to n bytes.
func attack58Padded(n int) string {
	v := `{"userIds":["` + attack58B + `"],"settings":["Gamertag"]}`
	return v + strings.Repeat(" ", n-len(v))
}

// onlyReader hides a reader's type so that net/http sends it chunked
// (no Content-Length).
type onlyReader struct{ io.Reader }

// attack58Send sends one request through client; chunked hides the length.
func attack58Send(t *testing.T, c *http.Client, method, url, body string, chunked bool, hdr ...string) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
		if chunked {
			rd = onlyReader{rd}
		}
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", mock.Token(attack58A, attack58Title))
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// held: options.go "MaxBody bounds request bodies (0: 1 MiB); larger ones
// get 413"; route.go decode "a body over Config.MaxBody is answered 413
// even when its JSON value ends before the bound". Over a real socket,
// with and without a Content-Length: exactly MaxBody is served, one byte
// more is 413.
func TestAttack58BodyAtMaxBodyEdge(t *testing.T) {
	const max = 4096
	s := mock.NewServer(mock.Must(mock.New(mock.Config{MaxBody: max})))
	defer s.Close()
	c := s.Client()
	for _, chunked := range []bool{false, true} {
		if st, b := attack58Send(t, c, "POST", attack58Batch, attack58Padded(max), chunked); st != 200 {
			t.Errorf("chunked=%v: a body of exactly MaxBody: %d %.200s, want 200", chunked, st, b)
		}
		if st, b := attack58Send(t, c, "POST", attack58Batch, attack58Padded(max+1), chunked); st != 413 {
			t.Errorf("chunked=%v: a body of MaxBody+1: %d %.200s, want 413", chunked, st, b)
		}
	}
}

// BREAK. options.go: "MaxBody bounds request bodies (0: 1 MiB); larger
// ones get 413", and RELIABILITY.md's third attacks: bodies "to routes
// that read no body" were 200, now "a body is read whole within MaxBody
// (over it 413 ...)". Only a Content-Length over it is refused there: the
// same 64 KiB body sent chunked (no Content-Length, over HTTP/1.1) to
// the profile read is 200, the rest never read.
func TestAttack58ChunkedBodyOverMaxBodyAtRouteReadingNone(t *testing.T) {
	const max = 4096
	s := mock.NewServer(mock.Must(mock.New(mock.Config{MaxBody: max})))
	defer s.Close()
	c := s.Client()
	pad := strings.Repeat(" ", 64<<10)
	if st, _ := attack58Send(t, c, "GET", attack58Read, pad, false); st != 413 {
		t.Errorf("with a Content-Length (the fixed case): %d, want 413", st)
	}
	if st, b := attack58Send(t, c, "GET", attack58Read, pad, true); st != 413 {
		t.Errorf("GET profile read with a 64 KiB chunked body (MaxBody 4096): %d %.120s, want 413", st, b)
	}
	if st, b := attack58Send(t, c, "DELETE", "https://userpresence.xboxlive.com/users/me/devices/current/titles/current", pad, true); st != 413 {
		t.Errorf("DELETE presence with a 64 KiB chunked body (MaxBody 4096): %d %.120s, want 413", st, b)
	}
}

// BREAK. route.go decode: "a JSON body into v, whole: a body over
// Config.MaxBody is answered 413 even when its JSON value ends before the
// bound, and one with anything but white space after its value 400";
// options.go "larger ones get 413". Once a script has any rule matching
// on a body (BodyContains), the script stage reads the first MaxBody
// bytes and hands the service only those: a chunked body of MaxBody+N
// bytes (white space, or garbage, past the bound) to a route no rule
// answers is served 200 as its first MaxBody bytes.
func TestAttack58ScriptBodyRuleTruncatesBodyToMaxBody(t *testing.T) {
	const max = 4096
	h := mock.Must(mock.New(mock.Config{MaxBody: max}))
	err := h.SetScript(mock.Script{Rules: []mock.ScriptRule{{
		Match:   mock.ScriptMatch{Host: "social.xboxlive.com", BodyContains: "never-sent"},
		Answers: []mock.ScriptAnswer{{Status: 503}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	s := mock.NewServer(h)
	defer s.Close()
	c := s.Client()
	// With a body rule in the script (the attack); without one (the reference) below.
	for _, body := range []string{attack58Padded(max) + strings.Repeat(" ", 1000), attack58Padded(max) + "garbage after the bound"} {
		if st, b := attack58Send(t, c, "POST", attack58Batch, body, true); st != 413 && st != 400 {
			t.Errorf("with a body rule in the script, a chunked body of %d bytes (MaxBody %d, %q past the bound): %d %.160s, want 413 (or 400 for the garbage)",
				len(body), max, body[max:min(len(body), max+30)], st, b)
		}
	}
	h.SetScript(mock.Script{})
	for _, body := range []string{attack58Padded(max) + strings.Repeat(" ", 1000), attack58Padded(max) + "garbage after the bound"} {
		if st, _ := attack58Send(t, c, "POST", attack58Batch, body, true); st != 413 && st != 400 {
			t.Errorf("without a script, a chunked body of %d bytes: %d, want 413/400", len(body), st)
		}
	}
}

// held: "a Content-Length over it is 413 at every route". In process
// (Handler.RoundTrip), a Content-Length that lies either way: one
// saying 10 bytes with a 64 KiB body is 413 when read (decode); one
// saying 1 MiB with a small body is 413 by its length.
func TestAttack58LyingContentLength(t *testing.T) {
	const max = 4096
	h := mock.Must(mock.New(mock.Config{MaxBody: max}))
	do := func(cl int64, body string) int {
		req, _ := http.NewRequest("POST", attack58Batch, strings.NewReader(body))
		req.ContentLength = cl
		req.Header.Set("Authorization", mock.Token(attack58A, attack58Title))
		resp, err := h.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if st := do(10, attack58Padded(64<<10)); st != 413 && st != 400 {
		t.Errorf("Content-Length 10, body 64 KiB: %d, want 413 (or 400)", st)
	}
	if st := do(1<<20, attack58Padded(200)); st != 413 {
		t.Errorf("Content-Length 1 MiB, body 200 bytes: %d, want 413", st)
	}
}

// held: the same over a socket with "Expect: 100-continue": a
// Content-Length over MaxBody is answered 413 without the body being
// asked for (the client's transport gives up waiting for 100 and gets
// the 413).
func TestAttack58ExpectContinueOverMaxBody(t *testing.T) {
	const max = 4096
	s := mock.NewServer(mock.Must(mock.New(mock.Config{MaxBody: max})))
	defer s.Close()
	tr := &http.Transport{ExpectContinueTimeout: 10 * time.Second}
	defer tr.CloseIdleConnections()
	send := func(body string) (int, time.Duration) {
		req, _ := http.NewRequest("POST", s.URL+"/users/batch/profile/settings", strings.NewReader(body))
		req.Host = "profile.xboxlive.com"
		req.Header.Set("Authorization", mock.Token(attack58A, attack58Title))
		req.Header.Set("Expect", "100-continue")
		start := time.Now()
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatalf("Expect: 100-continue, %d bytes: %v", len(body), err)
		}
		resp.Body.Close()
		return resp.StatusCode, time.Since(start)
	}
	if st, took := send(attack58Padded(1 << 20)); st != 413 || took > 5*time.Second {
		t.Errorf("Expect: 100-continue, Content-Length 1 MiB: %d after %v, want 413 at once", st, took)
	}
	if st, _ := send(attack58Padded(max)); st != 200 {
		t.Errorf("Expect: 100-continue at MaxBody: %d, want 200", st)
	}
}

// BREAK (HTTP/2): as TestAttack58ChunkedBodyOverMaxBodyAtRouteReadingNone,
// through the mock's TLS server over HTTP/2 (its Transport forces it): a
// body with no content-length header is 200 at a route reading none.
// The decode routes hold: MaxBody+1 without a length is 413.
func TestAttack58HTTP2BodiesOverMaxBody(t *testing.T) {
	const max = 4096
	s := mock.NewTLSServer(mock.Must(mock.New(mock.Config{MaxBody: max})))
	defer s.Close()
	c := s.Client()
	req, _ := http.NewRequest("GET", attack58Read, nil)
	req.Header.Set("Authorization", mock.Token(attack58A, attack58Title))
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.ProtoMajor != 2 {
		t.Skipf("not HTTP/2: %s", resp.Proto)
	}
	if st, b := attack58Send(t, c, "POST", attack58Batch, attack58Padded(max), true); st != 200 {
		t.Errorf("h2, no length, exactly MaxBody: %d %.120s", st, b)
	}
	if st, b := attack58Send(t, c, "POST", attack58Batch, attack58Padded(max+1), true); st != 413 {
		t.Errorf("h2, no length, MaxBody+1 at a decode route: %d %.120s, want 413", st, b)
	}
	if st, _ := attack58Send(t, c, "GET", attack58Read, strings.Repeat(" ", 64<<10), false); st != 413 {
		t.Errorf("h2, content-length 64 KiB at the profile read: %d, want 413", st)
	}
	if st, b := attack58Send(t, c, "GET", attack58Read, strings.Repeat(" ", 64<<10), true); st != 413 {
		t.Errorf("h2, a 64 KiB body without a length at the profile read (MaxBody 4096): %d %.120s, want 413", st, b)
	}
}

// held: journal.go "the request's body, up to maxCallBody"; a 413 by
// Content-Length reads nothing, and a 1 MiB chunked body refused by
// decode leaves at most 16 KiB in the record and the HAR.
func TestAttack58RecordOfOversizedBodies(t *testing.T) {
	const max = 64 << 10
	h := mock.Must(mock.New(mock.Config{MaxBody: max}))
	s := mock.NewServer(h)
	defer s.Close()
	c := s.Client()
	secret := "SECRETMARKER"
	body := attack58Padded(max) + strings.Repeat(secret, (1<<20)/len(secret))
	if st, _ := attack58Send(t, c, "POST", attack58Batch, body, true); st != 413 && st != 400 {
		t.Fatalf("chunked 1 MiB: %d", st)
	}
	if st, _ := attack58Send(t, c, "POST", attack58Batch, body, false); st != 413 {
		t.Fatalf("1 MiB with a length: %d", st)
	}
	var har bytes.Buffer
	if err := h.WriteHAR(&har, mock.CallFilter{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(har.String(), secret) {
		t.Errorf("the HAR holds body bytes past MaxBody (%d bytes of HAR)", har.Len())
	}
	if har.Len() > 200<<10 {
		t.Errorf("HAR of two refused requests: %d bytes", har.Len())
	}
	calls := h.Calls(mock.CallFilter{})
	for _, cl := range calls {
		if cl.Status != 413 && cl.Status != 400 {
			t.Errorf("call recorded %d", cl.Status)
		}
	}
	if len(calls) != 2 {
		t.Errorf("%d calls recorded, want 2", len(calls))
	}
}
