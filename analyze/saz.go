package analyze

import (
	"bufio"
	"cmp"
	"compress/gzip"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
)

// maxSessionFile bounds the bytes read of one file of a SAZ session (the
// request or response headers with the body's first MaxBody bytes, or the
// metadata).
const maxSessionFile = 1 << 20

// ReadSAZ reads a Fiddler session archive (.saz): a zip holding, per
// session N, raw/N_c.txt (the request as sent), raw/N_s.txt (the answer)
// and raw/N_m.xml (its timers). Each session becomes a Call, in session
// order, its time Fiddler's ClientBeginRequest. A session that lacks a
// request or a start time, whose answer is not an HTTP response (interim
// 1xx answers before it passed over) or has bytes after its body, whose
// files the zip cannot give back whole (a corrupt entry, a bad checksum, a
// file overlapping another), or whose files are listed twice or named two
// ways (raw/2_c.txt and raw/02_c.txt: no two readers agree on which is
// the session), whose request names Authorization or User-Agent twice or
// answer Retry-After twice, whose URL (its Host header's host when the
// request line names none) or 429's Retry-After is not one a HAR entry may
// hold (as ReadHAR says), or whose timers name an attribute twice, is
// skipped and named in Input.Problems, as is a session's file whose number
// is not decimal digits (raw/+2_c.txt) or that is named another way
// (raw\2_s.txt, ./raw/2_s.txt: archive/zip's Open reads it as
// raw/2_s.txt); the trace is then not Complete. A CONNECT tunnel is passed over. Of each file, the
// first 1 MiB is read (checked against its checksum when that is all of
// it), and what the files read inflate to is bounded per archive
// (256 MiB and 64 bytes per byte of it): past that, reading stops
// (Input.Stop). A zip whose directory is not what its end record says
// (fewer or more files, or bytes) is no trace: the error.
func ReadSAZ(r io.ReaderAt, size int64, add func(*Call)) (Input, error) {
	in := Input{}
	var files []zipFile
	var bad badNames
	dirOff, err := zipDirectory(r, size, func(name []byte, zf zipFile) {
		switch n, width, kind, found := sazName(string(name)); found {
		case sazSessionFile:
			zf.n, zf.width, zf.kind = n, width, kind
			files = append(files, zf)
		case sazBadName:
			bad.add(name, zf.offset)
		}
	})
	if err != nil {
		return in, fmt.Errorf("%w: SAZ: %v", ErrNotTrace, err)
	}
	if len(files) == 0 && bad.n == 0 {
		return in, fmt.Errorf("%w: SAZ: no raw/N_c.txt sessions in the archive", ErrNotTrace)
	}
	limitFiles(files, dirOff)
	slices.SortStableFunc(files, func(a, b zipFile) int { return cmp.Compare(a.n, b.n) })
	o, br := &zipOpener{r: r, left: inflateBudget(size)}, bufio.NewReader(nil)
	i := 0
	for ; len(files) > 0; i++ {
		s := sazSession{o: o, br: br}
		n := files[0].n
		for len(files) > 0 && files[0].n == n {
			s.set(&files[0])
			files = files[1:]
		}
		if i == MaxCalls {
			in.stop(i, s.offset(), "stopped after %d sessions, the most one trace may hold", MaxCalls)
			return in, nil
		}
		c, reason := s.call(i)
		switch {
		case o.over:
			in.stop(i, s.offset(), "session %d: the files read inflate past %d MiB (256 MiB and 64 bytes per byte of the archive)", n, inflateBudget(size)>>20)
			return in, nil
		case reason == tunnel:
		case reason != "":
			in.problem(i, s.offset(), "session %d: %s", n, reason)
		default:
			in.Calls++
			add(c)
		}
	}
	bad.report(&in, i)
	return in, nil
}

// limitFiles sets each file's limit: where the next file (by offset)
// starts, or the directory for the last, so that a file read past it
// overlaps another.
func limitFiles(files []zipFile, dirOff uint64) {
	slices.SortStableFunc(files, func(a, b zipFile) int { return cmp.Compare(a.offset, b.offset) })
	for i := range files {
		files[i].limit = dirOff
		if i+1 < len(files) {
			files[i].limit = files[i+1].offset
		}
	}
}

// badNames are the files named as a session's whose number is not one.
type badNames struct {
	n     int
	names []string // the first maxProblems, clipped
	offs  []uint64
}

func (b *badNames) add(name []byte, off uint64) {
	if b.n++; len(b.names) < maxProblems {
		b.names, b.offs = append(b.names, clip(string(name))), append(b.offs, off)
	}
}

// report names each in in, after the i sessions read.
func (b *badNames) report(in *Input, i int) {
	for k := range b.n {
		if k >= len(b.names) {
			in.problem(i, -1, "a session's file whose number is not decimal digits, or named another way")
			continue
		}
		in.problem(i, int64(min(b.offs[k], 1<<62)), "%s: its number is not decimal digits, or it is a session's file named another way (readers differ on which file it is)", b.names[k])
	}
}

// sazSession is one session's files.
type sazSession struct {
	o       *zipOpener
	br      *bufio.Reader // reused for each file
	c, s, m *zipFile
	bad     string // why the session's files are not one session's
}

// set adds f to the session; a file of a kind it has, or named with
// another count of digits, makes it no session.
func (s *sazSession) set(f *zipFile) {
	slot := &s.c
	switch f.kind {
	case 's':
		slot = &s.s
	case 'm':
		slot = &s.m
	}
	for _, g := range []*zipFile{s.c, s.s, s.m} {
		if g != nil && g.width != f.width && s.bad == "" {
			s.bad = fmt.Sprintf("files named %0*d_ and %0*d_: two sessions, or one, as readers differ", g.width, g.n, f.width, f.n)
		}
	}
	if *slot != nil && s.bad == "" {
		s.bad = fmt.Sprintf("raw/%0*d_%s listed twice", f.width, f.n, kindName(f.kind))
	}
	*slot = f
}

// kindName is a session file's name after its number.
func kindName(kind byte) string {
	switch kind {
	case 'c':
		return "c.txt"
	case 's':
		return "s.txt"
	}
	return "m.xml"
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

// What sazName found a file's name to be.
const (
	sazOther       = iota // no session's file
	sazSessionFile        // raw/N_c.txt, N_s.txt or N_m.xml
	sazBadName            // named as one, but N is not decimal digits
)

// zipOpenName is the name archive/zip's Reader.Open gives a file named
// name: backslashes as slashes, the path cleaned, no leading "/" or "../".
func zipOpenName(name string) string {
	p := strings.TrimPrefix(path.Clean(strings.ReplaceAll(name, `\`, "/")), "/")
	for strings.HasPrefix(p, "../") {
		p = p[len("../"):]
	}
	return p
}

// sazName parses "raw/12_c.txt" into 12, its digits' count (2) and 'c'.
// A session's number is decimal digits only, at most 9 of them: Fiddler
// writes no other.
func sazName(name string) (n int, width uint8, kind byte, found int) {
	if z := zipOpenName(name); z != name {
		// Named another way: archive/zip's Open (an fs.FS of the zip) reads
		// it as z. A session's file so named is one no two readers agree on.
		if _, _, _, f := sazName(z); f != sazOther {
			return 0, 0, 0, sazBadName
		}
		return 0, 0, 0, sazOther
	}
	dir, file := path.Split(name)
	if !strings.EqualFold(dir, "raw/") {
		return 0, 0, 0, sazOther
	}
	num, rest, ok := strings.Cut(file, "_")
	if !ok {
		return 0, 0, 0, sazOther
	}
	switch strings.ToLower(rest) {
	case "c.txt":
		kind = 'c'
	case "s.txt":
		kind = 's'
	case "m.xml":
		kind = 'm'
	default:
		return 0, 0, 0, sazOther
	}
	if num == "" || len(num) > 9 || strings.Trim(num, "0123456789") != "" {
		return 0, 0, 0, sazBadName
	}
	n, _ = strconv.Atoi(num)
	return n, uint8(len(num)), kind, sazSessionFile
}

func (s *sazSession) call(i int) (*Call, string) {
	switch {
	case s.bad != "":
		return nil, s.bad
	case s.c == nil:
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
	c.cut()
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
	if bad := onceEach(req.Header, "Authorization", "User-Agent"); bad != "" {
		return bad
	}
	c.Method, c.URL = req.Method, u.String()
	if bad := urlProblem(c.URL); bad != "" {
		return bad
	}
	if a := req.Header.Get("Authorization"); a != "" {
		c.Authorization = redactAuth(a) // the token is never kept
	}
	c.UserAgent = req.Header.Get("User-Agent")
	c.RequestBody, _ = io.ReadAll(io.LimitReader(req.Body, MaxBody))
	return ""
}

// onceEach says which of the headers names h holds more than once
// (net/http's Get takes the first; other readers the last), or "".
func onceEach(h http.Header, names ...string) string {
	for _, n := range names {
		if vs := h.Values(n); len(vs) > 1 {
			return fmt.Sprintf("%d %s headers: readers differ on which counts", len(vs), n)
		}
	}
	return ""
}

// sazResponse reads the answer into c: an empty file is a session without
// one. Interim answers (1xx but 101, RFC 9110 §15.2) before it are passed
// over, as a client does; bytes after its body (another answer) make the
// session a problem, since which answer the client acted on is unknown.
func sazResponse(r *bufio.Reader, c *Call) string {
	if _, err := r.Peek(1); err == io.EOF {
		return ""
	}
	req := &http.Request{Method: c.Method} // a HEAD's answer has no body, whatever its Content-Length says
	resp, err := http.ReadResponse(r, req)
	for err == nil && interim(resp.StatusCode) {
		code := resp.StatusCode
		if resp, err = http.ReadResponse(r, req); err == io.EOF {
			return fmt.Sprintf("an interim %d answer and no final one", code)
		}
	}
	if err != nil {
		return err.Error()
	}
	if bad := onceEach(resp.Header, "Retry-After"); bad != "" {
		return bad
	}
	if bad := retryAfterProblem(resp.StatusCode, resp.Header.Values("Retry-After") != nil, resp.Header.Get("Retry-After")); bad != "" {
		return bad
	}
	c.Status, c.RetryAfter = resp.StatusCode, resp.Header.Get("Retry-After")
	body := io.Reader(resp.Body)
	if strings.EqualFold(resp.Header.Get("Content-Encoding"), "gzip") {
		if zr, err := gzip.NewReader(resp.Body); err == nil {
			body = zr
		}
	}
	c.ResponseBody, _ = io.ReadAll(io.LimitReader(body, MaxBody))
	io.Copy(io.Discard, resp.Body)
	if _, err := r.Peek(1); err != io.EOF {
		return fmt.Sprintf("bytes after the %d answer's body (another answer?): readers differ on which counts", resp.StatusCode)
	}
	return ""
}

// interim reports whether status is an interim answer, which a final one
// follows: 1xx but 101 Switching Protocols, after which the connection is
// no longer HTTP.
func interim(status int) bool {
	return status >= 100 && status < 200 && status != http.StatusSwitchingProtocols
}

// sazTimerAttrs are the timers of a session's SessionTimers element. An
// element given twice, or an attribute named twice in it (which XML does
// not allow, and .NET's reader, Fiddler's, refuses; encoding/xml keeps the
// last), is an error: readers differ on which counts.
type sazTimerAttrs struct {
	Begin, Done string
	read        bool
}

func (t *sazTimerAttrs) UnmarshalXML(d *xml.Decoder, start xml.StartElement) error {
	if t.read {
		return errors.New("SessionTimers twice: readers differ on which counts")
	}
	t.read = true
	var seen [2]bool
	for _, a := range start.Attr {
		to, k := &t.Begin, 0
		switch a.Name.Local {
		case "ClientBeginRequest":
		case "ClientDoneResponse":
			to, k = &t.Done, 1
		default:
			continue
		}
		if seen[k] {
			return fmt.Errorf("%s twice in SessionTimers: not well-formed XML", a.Name.Local)
		}
		seen[k], *to = true, a.Value
	}
	return d.Skip()
}

// sazTimers reads the session's timers into c.
func sazTimers(r *bufio.Reader, c *Call) string {
	var m struct {
		Timers sazTimerAttrs `xml:"SessionTimers"`
	}
	if err := xml.NewDecoder(r).Decode(&m); err != nil {
		return err.Error()
	}
	t, err := time.Parse(time.RFC3339Nano, m.Timers.Begin)
	if err != nil {
		return fmt.Sprintf("ClientBeginRequest %s is not an ISO 8601 time", shownValue(m.Timers.Begin))
	}
	if !countable(t) {
		return uncountable("ClientBeginRequest", t)
	}
	c.Time = t
	if done, err := time.Parse(time.RFC3339Nano, m.Timers.Done); err == nil && done.After(t) {
		c.Duration = elapsed(float64(done.Sub(t)) / float64(time.Millisecond))
	}
	return ""
}
