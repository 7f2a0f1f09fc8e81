package har

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"sort"
	"sync"
	"time"

	"github.com/xblgo/fgrl/internal/xblauth"
)

// Write writes entries as a HAR 1.2 document. Sensitive headers are written
// redacted whatever the entry holds.
func Write(w io.Writer, entries []Entry) error {
	var f file
	f.Log.Version = "1.2"
	f.Log.Creator = creator{Name: "fgrl", Version: "0.1.0"}
	f.Log.Entries = make([]rawEntry, 0, len(entries))
	for _, e := range entries {
		f.Log.Entries = append(f.Log.Entries, e.raw())
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(&f)
}

func (e Entry) raw() rawEntry {
	r := rawEntry{StartedDateTime: e.Started.UTC().Format(time.RFC3339Nano)}
	r.Request = rawRequest{Method: e.Method, URL: e.URL, HTTPVersion: "HTTP/1.1", Headers: []header{},
		QueryString: []header{}, Cookies: []header{}, HeadersSize: -1, BodySize: -1}
	if u, err := url.Parse(e.URL); err == nil {
		r.Request.Headers = append(r.Request.Headers, header{"Host", u.Host})
	}
	if e.Authorization != "" {
		r.Request.Headers = append(r.Request.Headers, header{"Authorization", xblauth.Redact(e.Authorization)})
	}
	names := make([]string, 0, len(e.Extra))
	for k := range e.Extra {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		v := e.Extra[k]
		if xblauth.Sensitive(k) {
			v = "REDACTED"
		}
		r.Request.Headers = append(r.Request.Headers, header{k, v})
	}
	r.Response = rawResponse{Status: e.Status, StatusText: http.StatusText(e.Status), HTTPVersion: "HTTP/1.1",
		Headers: []header{}, Cookies: []header{}, Content: content{MimeType: "application/json"}, HeadersSize: -1, BodySize: -1}
	if e.RetryAfter != "" {
		r.Response.Headers = append(r.Response.Headers, header{"Retry-After", e.RetryAfter})
	}
	return r
}

// Recorder is an http.RoundTripper that records every request it passes to
// Base, for writing as HAR. It is safe for concurrent use.
type Recorder struct {
	// Base sends the requests; nil means http.DefaultTransport.
	Base http.RoundTripper
	// Now is the clock stamped on entries; nil means time.Now.
	Now func() time.Time

	mu      sync.Mutex
	entries []Entry
}

// RoundTrip records req and its response status.
func (r *Recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	e := Entry{Started: now(), Method: req.Method, URL: req.URL.String(),
		Authorization: xblauth.Redact(req.Header.Get("Authorization"))}
	if req.Host != "" && req.Host != req.URL.Host {
		u := *req.URL
		u.Host = req.Host
		e.URL = u.String()
	}
	base := r.Base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(req)
	if err == nil {
		e.Status = resp.StatusCode
		e.RetryAfter = resp.Header.Get("Retry-After")
	}
	r.mu.Lock()
	r.entries = append(r.entries, e)
	r.mu.Unlock()
	return resp, err
}

// Entries returns what was recorded, oldest first.
func (r *Recorder) Entries() []Entry {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := append([]Entry(nil), r.entries...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Started.Before(out[j].Started) })
	return out
}
