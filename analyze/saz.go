package analyze

import (
	"bufio"
	"cmp"
	"compress/gzip"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"path"
	"slices"
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
// request or a start time, whose answer is not an HTTP response, or whose
// files the zip cannot give back whole (a corrupt entry, a bad checksum) is
// skipped and named in Input.Problems, and the trace is not Complete; a
// CONNECT tunnel is passed over. Of each file, the first 1 MiB is read
// (checked against its checksum when that is all of it).
func ReadSAZ(r io.ReaderAt, size int64, add func(*Call)) (Input, error) {
	in := Input{}
	var files []zipFile
	err := zipDirectory(r, size, func(name []byte, zf zipFile) {
		if n, kind, ok := sazName(string(name)); ok {
			zf.n, zf.kind = n, kind
			files = append(files, zf)
		}
	})
	if err != nil {
		return in, fmt.Errorf("%w: SAZ: %v", ErrNotTrace, err)
	}
	if len(files) == 0 {
		return in, fmt.Errorf("%w: SAZ: no raw/N_c.txt sessions in the archive", ErrNotTrace)
	}
	slices.SortStableFunc(files, func(a, b zipFile) int { return cmp.Compare(a.n, b.n) })
	o, br := &zipOpener{r: r}, bufio.NewReader(nil)
	for i := 0; len(files) > 0; i++ {
		s := sazSession{o: o, br: br}
		n := files[0].n
		for len(files) > 0 && files[0].n == n {
			s.set(&files[0])
			files = files[1:]
		}
		if i == MaxCalls {
			in.stop(i, s.offset(), "stopped after %d sessions, the most one trace may hold", MaxCalls)
			break
		}
		c, bad := s.call(i)
		switch {
		case bad == tunnel:
		case bad != "":
			in.problem(i, s.offset(), "session %d: %s", n, bad)
		default:
			in.Calls++
			add(c)
		}
	}
	return in, nil
}

// sazSession is one session's files.
type sazSession struct {
	o       *zipOpener
	br      *bufio.Reader // reused for each file
	c, s, m *zipFile
}

func (s *sazSession) set(f *zipFile) {
	switch f.kind {
	case 'c':
		s.c = f
	case 's':
		s.s = f
	case 'm':
		s.m = f
	}
}

// offset is where the session's first file starts in the zip.
func (s *sazSession) offset() int64 {
	for _, f := range []*zipFile{s.c, s.s, s.m} {
		if f != nil {
			return int64(min(f.offset, 1<<62))
		}
	}
	return -1
}

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
	c := &Call{Index: i, Offset: s.offset()}
	if bad := s.read(s.c, "c.txt", func(r *bufio.Reader) string { return sazRequest(r, c) }); bad != "" {
		return nil, bad
	}
	if s.m == nil {
		return nil, "no timers (N_m.xml)"
	}
	if bad := s.read(s.m, "m.xml", func(r *bufio.Reader) string { return sazTimers(r, c) }); bad != "" {
		return nil, bad
	}
	if s.s != nil {
		if bad := s.read(s.s, "s.txt", func(r *bufio.Reader) string { return sazResponse(r, c) }); bad != "" {
			return nil, bad
		}
	}
	return c, ""
}

// read reads f's first maxSessionFile bytes through read, then the rest of
// them, and returns why f could not be read: the zip's reason (a corrupt
// file, a bad checksum), which comes first, or read's.
func (s *sazSession) read(f *zipFile, name string, read func(*bufio.Reader) string) string {
	name = fmt.Sprintf("%d_%s", f.n, name)
	r, err := s.o.open(f)
	if err != nil {
		return name + ": " + err.Error()
	}
	zr := &errReader{r: r}
	lr := io.LimitReader(zr, maxSessionFile)
	s.br.Reset(lr)
	bad := read(s.br)
	io.Copy(io.Discard, lr)
	if zr.err != nil {
		return name + ": " + zr.err.Error()
	}
	if bad != "" && bad != tunnel {
		return name + ": " + bad
	}
	return bad
}

// tunnel is the reason sazRequest gives a CONNECT tunnel: passed over,
// not a problem.
const tunnel = "tunnel"

// errReader keeps the first error of r other than io.EOF.
type errReader struct {
	r   io.Reader
	err error
}

func (e *errReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF && e.err == nil {
		e.err = err
	}
	return n, err
}

// sazRequest reads the request as sent into c.
func sazRequest(r *bufio.Reader, c *Call) string {
	req, err := http.ReadRequest(r)
	if err != nil {
		return err.Error()
	}
	if req.Method == http.MethodConnect {
		return tunnel
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

// sazResponse reads the answer into c: an empty file is a session without
// one.
func sazResponse(r *bufio.Reader, c *Call) string {
	if _, err := r.Peek(1); err == io.EOF {
		return ""
	}
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		return err.Error()
	}
	c.Status, c.RetryAfter = resp.StatusCode, resp.Header.Get("Retry-After")
	body := io.Reader(resp.Body)
	if strings.EqualFold(resp.Header.Get("Content-Encoding"), "gzip") {
		if zr, err := gzip.NewReader(resp.Body); err == nil {
			body = zr
		}
	}
	c.ResponseBody, _ = io.ReadAll(io.LimitReader(body, MaxBody))
	return ""
}

// sazTimers reads the session's timers into c.
func sazTimers(r *bufio.Reader, c *Call) string {
	var m struct {
		Timers struct {
			Begin string `xml:"ClientBeginRequest,attr"`
			Done  string `xml:"ClientDoneResponse,attr"`
		} `xml:"SessionTimers"`
	}
	if err := xml.NewDecoder(r).Decode(&m); err != nil {
		return err.Error()
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
