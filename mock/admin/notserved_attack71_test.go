package admin_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/mock/admin"
)

func attack71Do(h http.Handler, method, target, body, host, peer string, hdr map[string]string) *httptest.ResponseRecorder {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, target, rd)
	req.Host, req.RemoteAddr = host, peer
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// attack71JSONError reports the {"error": ...} of rec, or why it is not one.
func attack71JSONError(rec *httptest.ResponseRecorder, head bool) (string, bool) {
	if !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		return "Content-Type " + rec.Header().Get("Content-Type"), false
	}
	if head {
		return "", true
	}
	var e map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil {
		return err.Error(), false
	}
	s, ok := e["error"].(string)
	return s, ok && s != "" && len(e) == 1
}

// held: what no endpoint serves, asked by an admitted peer, is answered
// in the API's JSON with 405 and Allow (HEAD, OPTIONS, TRACE, CONNECT
// and PATCH on an endpoint's path, POST at /metrics served) or 404 (a
// path under the prefix no endpoint has: trailing slashes, encoded
// slashes, /metrics unserved), through Handler and WithServices.
// Promised (package doc): "Errors are JSON {"error": "..."} with a 4xx
// or 5xx status."
func TestAttack71NotServedIsJSON(t *testing.T) {
	h := mock.NewHandler()
	metrics := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "m 1\n") })
	for name, hd := range map[string]http.Handler{
		"WithServices":         admin.WithServices(h, admin.Config{}),
		"Handler":              admin.Handler(h, admin.Config{}),
		"WithServices+metrics": admin.WithServices(h, admin.Config{Metrics: metrics}),
	} {
		withMetrics := strings.HasSuffix(name, "metrics")
		for _, c := range []struct {
			method, target string
			status         int
			allow          string
		}{
			{"HEAD", "/_fgrl/api/reset", 405, "POST"},
			{"OPTIONS", "/_fgrl/api/faults", 405, "GET, HEAD, PUT, DELETE"},
			{"TRACE", "/_fgrl/api/world", 405, "GET, HEAD, PUT, DELETE"},
			{"CONNECT", "/_fgrl/api/calls", 405, "GET, HEAD, DELETE"},
			{"PATCH", "/_fgrl/", 405, "GET, HEAD"},
			{"POST", "/_fgrl/events", 405, "GET, HEAD"},
			{"GET", "/_fgrl/api/faults/", 404, ""},
			{"GET", "/_fgrl/api%2Ffaults", 404, ""},
			{"PUT", "/_fgrl/api/faults%2F", 404, ""},
			{"GET", "/_fgrl/api/", 404, ""},
			{"DELETE", "/_fgrl/nosuch/deeper/", 404, ""},
			{"GET", "/metrics", 404, ""},
			{"POST", "/metrics", 404, ""},
		} {
			status, allow := c.status, c.allow
			if withMetrics && c.target == "/metrics" {
				if c.method == "GET" {
					continue
				}
				status, allow = 405, "GET, HEAD"
			}
			rec := attack71Do(hd, c.method, c.target, "", "127.0.0.1:8080", "127.0.0.1:5000", nil)
			msg, ok := attack71JSONError(rec, c.method == "HEAD")
			if rec.Code != status || !ok || rec.Header().Get("Allow") != allow {
				t.Errorf("%s: %s %s: %d Allow %q %q (%s), want %d Allow %q and JSON", name, c.method, c.target, rec.Code,
					rec.Header().Get("Allow"), rec.Body.String(), msg, status, allow)
			}
		}
	}
}

// held: a path under the prefix written with a double slash or a dot
// segment is no error: it is redirected with 307 (method and body kept)
// to its clean path, and nothing is changed on the way; the clean path
// then answers as usual (404 JSON where no endpoint is). Promised (package
// doc): "Errors are JSON {"error": "..."} with a 4xx or 5xx status." (a
// redirect is not an error, and is not a 200 of another endpoint).
func TestAttack71DoubleSlashIsRedirect(t *testing.T) {
	h := mock.NewHandler()
	hd := admin.WithServices(h, admin.Config{})
	for _, c := range []struct{ method, target, clean string }{
		{"GET", "/_fgrl//api/faults", "/_fgrl/api/faults"},
		{"PUT", "/_fgrl/api//faults", "/_fgrl/api/faults"},
		{"DELETE", "/_fgrl/api/./calls", "/_fgrl/api/calls"},
		{"GET", "/_fgrl//nosuch", "/_fgrl/nosuch"},
	} {
		body := ""
		if c.method == "PUT" {
			body = `{"errorRate":0.5}`
		}
		rec := attack71Do(hd, c.method, c.target, body, "127.0.0.1:8080", "127.0.0.1:5000", nil)
		if rec.Code != http.StatusTemporaryRedirect || rec.Header().Get("Location") != c.clean {
			t.Errorf("%s %s: %d Location %q, want 307 to %s", c.method, c.target, rec.Code, rec.Header().Get("Location"), c.clean)
		}
	}
	if f := h.Faults(); f.ErrorRate != 0 {
		t.Errorf("PUT at a double-slash path set the faults: %+v", f)
	}
	rec := attack71Do(hd, "GET", "/_fgrl/nosuch", "", "127.0.0.1:8080", "127.0.0.1:5000", nil)
	if _, ok := attack71JSONError(rec, false); rec.Code != 404 || !ok {
		t.Errorf("GET /_fgrl/nosuch: %d %s", rec.Code, rec.Body)
	}
}

// held: the admission rule runs before any 404 or 405: a peer off
// loopback without the token, a Host that is no name of the mock, or
// another site's page, asking for a path no endpoint has, a method no
// endpoint takes, or an unclean path, is refused 401 or 403 with the
// rule's reason: no Allow, no endpoint list, no echo of its path or
// method. Promised (package doc): "A peer that is not on loopback must
// present Token"; "Every request must name the mock in its Host header
// by an IP address, "localhost" or one of Hosts".
func TestAttack71RefusedBeforeNotServed(t *testing.T) {
	h := mock.NewHandler()
	metrics := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "m 1\n") })
	hd := admin.WithServices(h, admin.Config{Token: "sekrit-token-123", Metrics: metrics})
	for _, who := range []struct {
		host, peer string
		hdr        map[string]string
		status     int
	}{
		{"10.0.0.1:8080", "192.0.2.7:4000", nil, 401},
		{"10.0.0.1:8080", "192.0.2.7:4000", map[string]string{"Authorization": "Bearer wrong"}, 401},
		{"evil.example:8080", "127.0.0.1:4000", nil, 403},
		{"127.0.0.1:8080", "127.0.0.1:4000", map[string]string{"Origin": "http://evil.example"}, 403},
		{"127.0.0.1:8080", "127.0.0.1:4000", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
	} {
		for _, c := range []struct{ method, target string }{
			{"GET", "/_fgrl/api/nosuchXYZ"},
			{"OPTIONS", "/_fgrl/api/faults"},
			{"PATCH", "/metrics"},
			{"TRACE", "/_fgrl/"},
			{"GET", "/_fgrl//api/faultsXYZ"},
			{"GET", "/_fgrl/api%2FfaultsXYZ"},
			{"GET", "/_fgrl/api/calls?bogusXYZ=1"},
			{"GET", "/_fgrl/api/calls?%zzXYZ"},
		} {
			rec := attack71Do(hd, c.method, c.target, "", who.host, who.peer, who.hdr)
			b := rec.Body.String()
			msg, ok := attack71JSONError(rec, false)
			if rec.Code != who.status || !ok || rec.Header().Get("Allow") != "" || rec.Header().Get("Location") != "" ||
				strings.Contains(b, "XYZ") || strings.Contains(b, c.method) || strings.Contains(b, "takes") ||
				strings.Contains(b, "no admin endpoint") {
				t.Errorf("%+v: %s %s: %d Allow %q Location %q %s (%s), want %d with the rule's reason only", who, c.method, c.target,
					rec.Code, rec.Header().Get("Allow"), rec.Header().Get("Location"), b, msg, who.status)
			}
		}
	}
}

// held: the 404 and 405 texts are escaped and clipped: a path holding
// escape codes, line breaks and 20 KiB, and a 4 KiB method, do not reach
// the answer raw or whole. Promised (commit 06394f1 / the API's
// errors): error text escaped and clipped (safetext.Quote of the path
// and method).
func TestAttack71NotServedTextEscapedClipped(t *testing.T) {
	h := mock.NewHandler()
	hd := admin.WithServices(h, admin.Config{})
	long := strings.Repeat("A", 20<<10)
	for _, c := range []struct{ method, target string }{
		{"GET", "/_fgrl/%1b[31mred%0d%0aX-Injected:%201/" + long},
		{"GET", "/_fgrl/%e2%80%ae%c2%9b" + long},
		{strings.Repeat("M", 4096), "/_fgrl/api/faults"},
	} {
		rec := attack71Do(hd, c.method, c.target, "", "127.0.0.1:8080", "127.0.0.1:5000", nil)
		msg, ok := attack71JSONError(rec, false)
		if !ok || rec.Code < 400 {
			t.Errorf("%.40q %.60q: %d %.200s", c.method, c.target, rec.Code, rec.Body.String())
			continue
		}
		if len(msg) > 400 || strings.ContainsAny(msg, "\x1b\r\n\u202e\u009b\x7f") {
			t.Errorf("%.40q %.60q: error of %d bytes: %.300q", c.method, c.target, len(msg), msg)
		}
	}
}

// held: what GET /_fgrl/api/faults answers for a fault set "for" 2m,
// PUT back a minute on, keeps its "until": at two minutes from the first
// PUT the fault has ended and GET lists none. Promised (package doc):
// "GET /_fgrl/api/faults the faults in force"; (mock.ServiceFault.For)
// "how long the fault lasts from when it is set".
func TestAttack71FaultsPutBackDoesNotExtend(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	add := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	h := mock.Must(mock.New(mock.Config{Now: clock}))
	hd := admin.WithServices(h, admin.Config{})
	put := func(body string) {
		rec := attack71Do(hd, "PUT", "/_fgrl/api/faults", body, "127.0.0.1:8080", "127.0.0.1:5000", nil)
		if rec.Code != 200 {
			t.Fatalf("PUT %s: %d %s", body, rec.Code, rec.Body)
		}
	}
	get := func() string {
		return attack71Do(hd, "GET", "/_fgrl/api/faults", "", "127.0.0.1:8080", "127.0.0.1:5000", nil).Body.String()
	}
	put(`{"services":[{"service":"presence","status":503,"for":"2m"}]}`)
	add(time.Minute)
	put(get())
	add(59 * time.Second)
	put(get())
	add(time.Second)
	var f mock.Faults
	if err := json.Unmarshal([]byte(get()), &f); err != nil || len(f.Services) != 0 {
		t.Errorf("GET 2m after a 2m fault, PUT back twice: %+v (%v)", f.Services, err)
	}
}
