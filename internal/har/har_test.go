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
