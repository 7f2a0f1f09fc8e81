package har

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestRoundTrip(t *testing.T) {
	in := []Entry{
		{Started: t0, Method: "GET", URL: "https://profile.xboxlive.com/users/me", Authorization: "XBL3.0 x=123;secret", Status: 200},
		{Started: t0.Add(time.Second), Method: "POST", URL: "https://a/b", Status: 429, RetryAfter: "12"},
	}
	buf := writeAll(t, in)
	if s := buf.String(); strings.Contains(s, "secret") {
		t.Fatalf("HAR holds a secret:\n%s", s)
	}
	got, err := Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		{Started: t0, Method: "GET", URL: "https://profile.xboxlive.com/users/me", Authorization: "XBL3.0 x=123;REDACTED", Status: 200},
		{Started: t0.Add(time.Second), Method: "POST", URL: "https://a/b", Status: 429, RetryAfter: "12"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("round trip mismatch (-want +got):\n%s", diff)
	}
}

func TestReadSkipsOtherKeys(t *testing.T) {
	in := `{"log": {"version": "1.2", "creator": {"name": "Fiddler"}, "pages": [{"id": "p"}], "entries": [
	  {"startedDateTime": "2026-01-01T00:00:00.5+01:00", "time": 1, "request": {"method": "GET", "url": "https://x/y",
	   "headers": [{"name": "authorization", "value": "XBL3.0 x=9;t"}]},
	   "response": {"status": 503, "headers": [{"name": "retry-after", "value": "3"}], "content": {"text": "big"}}}]}}`
	got, err := Read(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{{Started: t0.Add(-time.Hour + 500*time.Millisecond), Method: "GET", URL: "https://x/y",
		Authorization: "XBL3.0 x=9;REDACTED", Status: 503, RetryAfter: "3"}}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}

func TestReadErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{``, "har: not a HAR file"},
		{`[]`, "har: not a HAR file"},
		{`{"log": {"entries": {}}}`, "har: log.entries is not an array"},
		{`{"log": {}}`, `har: not a HAR file: no "log.entries"`},
		{`{"log": {"entries": [{"startedDateTime": "x", "request": {"method": "GET", "url": "u"}}]}}`, "har: entry 0: startedDateTime"},
		{`{"log": {"entries": [{"startedDateTime": "2026-01-01T00:00:00Z", "request": {}}]}}`, "har: entry 0: request has no method or url"},
		{`{"log": {"entries": [{"startedDateTime": 5}]}}`, "har: entry 0: json: cannot unmarshal"},
	}
	for _, tt := range tests {
		_, err := Read(strings.NewReader(tt.in))
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("Read(%q) = %v, want %q...", tt.in, err, tt.want)
		}
	}
}

func TestReadTooLarge(t *testing.T) {
	// A stream that never ends must stop at MaxSize, not exhaust memory.
	r := io.MultiReader(strings.NewReader(`{"log": {"entries": [{"startedDateTime": "`), endless{})
	_, err := ReadLimit(r, 1<<20)
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("Read(endless) = %v, want ErrTooLarge", err)
	}
}

type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}

func TestRecorder(t *testing.T) {
	base := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "5")
		w.WriteHeader(429)
	})
	srv := httptest.NewServer(base)
	defer srv.Close()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	rec := &Recorder{Now: func() time.Time { return t0 }, W: w}
	req, _ := http.NewRequest("GET", srv.URL+"/x", nil)
	req.Host = "profile.xboxlive.com"
	req.Header.Set("Authorization", "XBL3.0 x=1;secret")
	resp, err := rec.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(Entry{}); err == nil {
		t.Error("Write after Close succeeded")
	}
	got, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{{Started: t0, Method: "GET", URL: "http://profile.xboxlive.com/x", Authorization: "XBL3.0 x=1;REDACTED", Status: 429, RetryAfter: "5"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("recorded mismatch (-want +got):\n%s", diff)
	}
}

func FuzzRead(f *testing.F) {
	f.Add(writeAll(f, []Entry{{Started: t0, Method: "GET", URL: "https://a/", Status: 429, RetryAfter: "1"}}).Bytes())
	f.Add([]byte(`{"log": {"entries": []}}`))
	f.Add([]byte(`{"log": {"x": [1, {"y": 2}], "entries": [{}]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		entries, err := Read(bytes.NewReader(b))
		if err != nil {
			return
		}
		for _, e := range entries {
			if e.Method == "" || e.URL == "" || strings.Contains(e.Authorization, ";") && !strings.HasSuffix(e.Authorization, ";REDACTED") {
				t.Fatalf("bad entry %+v", e)
			}
		}
	})
}

// writeAll writes entries as one HAR document.
func writeAll(tb testing.TB, entries []Entry) *bytes.Buffer {
	tb.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for _, e := range entries {
		if err := w.Write(e); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return &buf
}
