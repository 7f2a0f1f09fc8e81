package analyze

import (
	"archive/zip"
	"bufio"
	"compress/gzip"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/xblgo/fgrl/internal/xblauth"
)

// maxSessionFile bounds the bytes read of one file of a SAZ session (the
// request or response headers with the body's first MaxBody bytes, or the
// metadata).
const maxSessionFile = 1 << 20

// ReadSAZ reads a Fiddler session archive (.saz): a zip holding, per
// session N, raw/N_c.txt (the request as sent), raw/N_s.txt (the answer)
// and raw/N_m.xml (its timers). Each session becomes a Call, in session
// order, its time Fiddler's ClientBeginRequest. A session that lacks a
// request or a start time, or is a CONNECT tunnel, is skipped and named in
// Input.Problems (tunnels are not counted as problems).
func ReadSAZ(r io.ReaderAt, size int64, add func(*Call)) (Input, error) {
	in := Input{}
	z, err := zip.NewReader(r, size)
	if err != nil {
		return in, fmt.Errorf("%w: SAZ: %v", ErrNotTrace, err)
	}
	sessions := map[int]*sazSession{}
	for _, f := range z.File {
		n, kind, ok := sazName(f.Name)
		if !ok {
			continue
		}
		s := sessions[n]
		if s == nil {
			if len(sessions) == MaxCalls {
				in.Truncated = fmt.Sprintf("stopped after %d sessions", MaxCalls)
				break
			}
			s = &sazSession{}
			sessions[n] = s
		}
		switch kind {
		case 'c':
			s.c = f
		case 's':
			s.s = f
		case 'm':
			s.m = f
		}
	}
	if len(sessions) == 0 {
		return in, fmt.Errorf("%w: SAZ: no raw/N_c.txt sessions in the archive", ErrNotTrace)
	}
	order := make([]int, 0, len(sessions))
	for n := range sessions {
		order = append(order, n)
	}
	sort.Ints(order)
	for i, n := range order {
		c, bad := sessions[n].call(i)
		switch {
		case bad == "tunnel":
		case bad != "":
			in.problem(i, "session %d: %s", n, bad)
		default:
			in.Calls++
			add(c)
		}
	}
	return in, nil
}

type sazSession struct{ c, s, m *zip.File }

// sazName parses "raw/12_c.txt" into 12 and 'c'.
func sazName(name string) (int, byte, bool) {
	dir, file := path.Split(name)
	if !strings.EqualFold(dir, "raw/") {
		return 0, 0, false
	}
	num, rest, ok := strings.Cut(file, "_")
	n, err := strconv.Atoi(num)
	if !ok || err != nil || n < 0 {
		return 0, 0, false
	}
	switch strings.ToLower(rest) {
	case "c.txt":
		return n, 'c', true
	case "s.txt":
		return n, 's', true
	case "m.xml":
		return n, 'm', true
	}
	return 0, 0, false
}

func (s *sazSession) call(i int) (*Call, string) {
	if s.c == nil {
		return nil, "no request (N_c.txt)"
	}
	c := &Call{Index: i}
	if bad := s.request(c); bad != "" {
		return nil, bad
	}
	if s.m == nil {
		return nil, "no timers (N_m.xml)"
	}
	if bad := s.timers(c); bad != "" {
		return nil, bad
	}
	if s.s != nil {
		s.response(c) // an unreadable answer is a call without one
	}
	return c, ""
}

func (s *sazSession) request(c *Call) string {
	rc, err := s.c.Open()
	if err != nil {
		return "request: " + err.Error()
	}
	defer rc.Close()
	req, err := http.ReadRequest(bufio.NewReader(io.LimitReader(rc, maxSessionFile)))
	if err != nil {
		return "request: " + err.Error()
	}
	if req.Method == http.MethodConnect {
		return "tunnel"
	}
	u := *req.URL
	if u.Host == "" {
		u.Host = req.Host
	}
	if u.Scheme == "" {
		u.Scheme = "https"
	}
	c.Method, c.URL = req.Method, u.String()
	if a := req.Header.Get("Authorization"); a != "" {
		c.Authorization = xblauth.Redact(a) // the token is never kept
	}
	c.UserAgent = clipUserAgent(req.Header.Get("User-Agent"))
	c.RequestBody, _ = io.ReadAll(io.LimitReader(req.Body, MaxBody))
	return ""
}

func (s *sazSession) response(c *Call) {
	rc, err := s.s.Open()
	if err != nil {
		return
	}
	defer rc.Close()
	resp, err := http.ReadResponse(bufio.NewReader(io.LimitReader(rc, maxSessionFile)), nil)
	if err != nil {
		return
	}
	c.Status, c.RetryAfter = resp.StatusCode, resp.Header.Get("Retry-After")
	body := io.Reader(resp.Body)
	if strings.EqualFold(resp.Header.Get("Content-Encoding"), "gzip") {
		if zr, err := gzip.NewReader(resp.Body); err == nil {
			body = zr
		}
	}
	c.ResponseBody, _ = io.ReadAll(io.LimitReader(body, MaxBody))
}

func (s *sazSession) timers(c *Call) string {
	rc, err := s.m.Open()
	if err != nil {
		return "timers: " + err.Error()
	}
	defer rc.Close()
	var m struct {
		Timers struct {
			Begin string `xml:"ClientBeginRequest,attr"`
			Done  string `xml:"ClientDoneResponse,attr"`
		} `xml:"SessionTimers"`
	}
	if err := xml.NewDecoder(io.LimitReader(rc, maxSessionFile)).Decode(&m); err != nil {
		return "timers: " + err.Error()
	}
	t, err := time.Parse(time.RFC3339Nano, m.Timers.Begin)
	if err != nil {
		return fmt.Sprintf("ClientBeginRequest %q is not an ISO 8601 time", clip(m.Timers.Begin))
	}
	c.Time = t
	if done, err := time.Parse(time.RFC3339Nano, m.Timers.Done); err == nil && done.After(t) {
		c.Duration = done.Sub(t)
	}
	return ""
}
