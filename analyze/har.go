package analyze

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/internal/xblauth"
)

// MaxCalls bounds the calls read from one trace.
const MaxCalls = 4_000_000

// Input is what a reader made of one trace.
type Input struct {
	Name  string `json:"name"`
	Calls int    `json:"calls"` // calls passed on
	// Problems are the entries skipped, each with its index and reason
	// (the first maxProblems; ProblemCount counts them all).
	Problems     []Problem `json:"problems,omitempty"`
	ProblemCount int       `json:"problemCount"`
	// Truncated says why reading stopped before the end, when it did: the
	// calls read until then are analyzed.
	Truncated string `json:"truncated,omitempty"`
}

// Problem is one entry a reader skipped.
type Problem struct {
	Index  int    `json:"index"`
	Reason string `json:"reason"`
}

const maxProblems = 100

func (in *Input) problem(i int, format string, args ...any) {
	in.ProblemCount++
	if len(in.Problems) < maxProblems {
		in.Problems = append(in.Problems, Problem{i, clip(fmt.Sprintf(format, args...))})
	}
}

// ErrNotTrace is returned when the input is not a trace of the kind read.
var ErrNotTrace = errors.New("not a trace")

// MaxTraceBytes bounds the bytes read of one trace: what follows is not
// read, and Input.Truncated says so.
const MaxTraceBytes = 4 << 30

// maxTraceBytes is MaxTraceBytes, lowered by tests.
var maxTraceBytes int64 = MaxTraceBytes

// ReadHAR reads a HAR 1.2 trace (what browsers, Fiddler and proxies
// export), streaming, and passes each entry to add as a Call (reused: add
// must copy what it keeps), its Authorization redacted, in trace order. An
// entry that lacks a method, URL or start time is skipped and named in
// Input.Problems; a file cut short, or longer than MaxTraceBytes or
// MaxCalls entries, yields the calls before the cut and Input.Truncated.
// The error is for input that is no HAR at all.
func ReadHAR(r io.Reader, add func(*Call)) (Input, error) {
	in := Input{}
	cr := &cappedReader{r: r, left: maxTraceBytes}
	dec := jsontext.NewDecoder(bufio.NewReaderSize(cr, 256<<10), jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))
	if err := seekEntries(dec); err != nil {
		if cr.over {
			return in, fmt.Errorf("%w: HAR: no entries within its first %d MiB", ErrNotTrace, maxTraceBytes>>20)
		}
		return in, fmt.Errorf("%w: HAR: %v", ErrNotTrace, err)
	}
	in.Truncated = decodeEntries(dec, 0, MaxCalls, func(c *Call) { in.Calls++; add(c) },
		func(i int, reason string) { in.problem(i, "%s", reason) })
	if cr.over {
		in.Truncated = fmt.Sprintf("stopped after %d MiB, the most one trace may hold", maxTraceBytes>>20)
	}
	return in, nil
}

// HARLimits returns the limits data a HAR written by xblcall simulate
// names (the log's _fgrlLimits field, before its entries), or nil when it
// names none. It reads only up to the entries, at most maxLimitsScan bytes.
func HARLimits(r io.Reader) ([]byte, error) {
	dec := jsontext.NewDecoder(bufio.NewReader(io.LimitReader(r, maxLimitsScan)), jsontext.AllowDuplicateNames(true))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, fmt.Errorf("%w: HAR: want an object holding \"log\"", ErrNotTrace)
	}
	for {
		tok, err := dec.ReadToken()
		if err != nil || tok.Kind() == '}' {
			return nil, nil
		}
		if tok.String() != "log" {
			if err := dec.SkipValue(); err != nil {
				return nil, nil
			}
			continue
		}
		if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
			return nil, nil
		}
		for {
			tok, err := dec.ReadToken()
			if err != nil || tok.Kind() == '}' || tok.String() == "entries" {
				return nil, nil
			}
			if tok.String() == "_fgrlLimits" {
				v, err := dec.ReadValue()
				if err != nil {
					return nil, nil
				}
				return append([]byte(nil), v...), nil
			}
			if err := dec.SkipValue(); err != nil {
				return nil, nil
			}
		}
	}
}

// maxLimitsScan bounds what HARLimits reads.
const maxLimitsScan = 2 << 20

// cappedReader reads at most left bytes of r; past them it fails, and over
// says it did.
type cappedReader struct {
	r    io.Reader
	left int64
	over bool
}

var errCapped = errors.New("trace over its byte limit")

func (c *cappedReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		if n, _ := c.r.Read(p[:min(len(p), 1)]); n > 0 { // the input goes on
			c.over = true
			return 0, errCapped
		}
		return 0, io.EOF
	}
	n, err := c.r.Read(p[:min(int64(len(p)), c.left)])
	c.left -= int64(n)
	return n, err
}

// decodeEntries decodes the entries dec is at (inside the entries array),
// numbering them from first, until the array ends or limit entries have
// been read (a negative limit: no limit); each becomes a call or a problem.
// It returns why it stopped early, or "".
func decodeEntries(dec *jsontext.Decoder, first, limit int, call func(*Call), problem func(i int, reason string)) string {
	var h harReader
	for i := first; ; i++ {
		switch dec.PeekKind() {
		case ']':
			return ""
		case 0:
			return fmt.Sprintf("the file ends inside entry %d", i)
		}
		if i-first == limit {
			return fmt.Sprintf("stopped after %d entries", limit)
		}
		c, bad, err := h.entry(dec, i)
		switch {
		case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
			return fmt.Sprintf("the file ends inside entry %d", i)
		case err != nil:
			return fmt.Sprintf("entry %d is not valid JSON (%v)", i, shortErr(err))
		case bad != "":
			problem(i, bad)
		default:
			call(c)
		}
	}
}

func shortErr(err error) string {
	if err == nil || errors.Is(err, io.EOF) {
		return "unexpected end of file"
	}
	reason := err.Error()
	var se *jsontext.SyntacticError
	if errors.As(err, &se) && se.Err != nil {
		reason = se.Err.Error()
	}
	// The decoder quotes the bad input as far as it has read it (a token's
	// fragment, a character whole or its first byte), which depends on how
	// the input arrived; the reason and the place do not.
	reason = safetext.Reason(reason, 60)
	if se != nil && se.ByteOffset > 0 {
		reason = fmt.Sprintf("%s, at byte %d", reason, se.ByteOffset)
	}
	return reason
}

// seekEntries moves dec into the log.entries array, skipping other values.
func seekEntries(dec *jsontext.Decoder) error {
	for _, key := range []string{"log", "entries"} {
		if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
			return fmt.Errorf("want an object holding %q", key)
		}
		for {
			tok, err := dec.ReadToken()
			if err != nil {
				return err
			}
			if tok.Kind() == '}' {
				return fmt.Errorf("no %q", key)
			}
			if tok.String() == key {
				break
			}
			if err := dec.SkipValue(); err != nil {
				return err
			}
		}
	}
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '[' {
		return errors.New("log.entries is not an array")
	}
	return nil
}

var authorization, retryAfter, userAgent = []byte("Authorization"), []byte("Retry-After"), []byte("User-Agent")

// harReader decodes entries into one reused Call.
type harReader struct {
	dec                     *jsontext.Decoder
	hdr                     headerFields
	c                       Call
	started                 string
	reqBody, respBody, text []byte
	encoding                string
}

// entry reads one entry. bad is why a well-formed entry is skipped; err is
// a syntax error, after which the stream cannot go on.
func (h *harReader) entry(dec *jsontext.Decoder, i int) (c *Call, bad string, err error) {
	h.c = Call{Index: i}
	h.dec = dec
	h.started, h.reqBody, h.respBody = "", h.reqBody[:0], h.respBody[:0]
	if dec.PeekKind() != '{' {
		return nil, "not an object", dec.SkipValue()
	}
	if err := object(dec, (*entryFields)(h)); err != nil {
		return nil, "", err
	}
	t, perr := time.Parse(time.RFC3339Nano, h.started)
	switch {
	case perr != nil:
		return nil, fmt.Sprintf("startedDateTime %q is not an ISO 8601 time", clip(h.started)), nil
	case h.c.Method == "" || h.c.URL == "":
		return nil, "the request has no method or url", nil
	}
	h.c.Time = t
	h.c.RequestBody, h.c.ResponseBody = clipBody(h.reqBody), clipBody(h.respBody)
	if h.c.Authorization != "" {
		h.c.Authorization = xblauth.Redact(h.c.Authorization) // the token is never kept
	}
	h.c.UserAgent = clipUserAgent(h.c.UserAgent)
	return &h.c, "", nil
}

// The levels of an entry, each a fielder over the one harReader (so that
// walking an entry allocates nothing but the strings kept).
type (
	entryFields    harReader
	requestFields  harReader
	postDataFields harReader
	responseFields harReader
	contentFields  harReader
)

func (f *entryFields) field(key []byte) error {
	h := (*harReader)(f)
	switch string(key) {
	case "startedDateTime":
		return h.str(&h.started)
	case "time":
		ms, err := number(h.dec)
		h.c.Duration = time.Duration(ms * float64(time.Millisecond))
		return err
	case "request":
		return object(h.dec, (*requestFields)(h))
	case "response":
		return object(h.dec, (*responseFields)(h))
	}
	return h.dec.SkipValue()
}

func (f *requestFields) field(key []byte) error {
	h := (*harReader)(f)
	switch string(key) {
	case "method":
		return h.str(&h.c.Method)
	case "url":
		return h.str(&h.c.URL)
	case "headers":
		h.hdr.want, h.hdr.to = [2][]byte{authorization, userAgent}, [2]*string{&h.c.Authorization, &h.c.UserAgent}
		return headers(h.dec, &h.hdr)
	case "postData":
		return object(h.dec, (*postDataFields)(h))
	}
	return h.dec.SkipValue()
}

func (f *postDataFields) field(key []byte) error {
	h := (*harReader)(f)
	if string(key) == "text" {
		return h.bytes(&h.reqBody)
	}
	return h.dec.SkipValue()
}

func (f *responseFields) field(key []byte) error {
	h := (*harReader)(f)
	switch string(key) {
	case "status":
		n, err := number(h.dec)
		if n >= 0 && n < 1000 {
			h.c.Status = int(n)
		}
		return err
	case "headers":
		h.hdr.want, h.hdr.to = [2][]byte{retryAfter, nil}, [2]*string{&h.c.RetryAfter, nil}
		return headers(h.dec, &h.hdr)
	case "content":
		h.encoding = ""
		err := object(h.dec, (*contentFields)(h))
		if err == nil && strings.EqualFold(h.encoding, "base64") {
			n, derr := base64.StdEncoding.Decode(h.respBody, h.respBody)
			if derr != nil {
				n = 0 // an undecodable body is no body
			}
			h.respBody = h.respBody[:n]
		}
		return err
	}
	return h.dec.SkipValue()
}

func (f *contentFields) field(key []byte) error {
	h := (*harReader)(f)
	switch string(key) {
	case "text":
		return h.bytes(&h.respBody)
	case "encoding":
		return h.str(&h.encoding)
	}
	return h.dec.SkipValue()
}

// str reads a string value into *s; any other value is skipped.
func (h *harReader) str(s *string) error {
	if err := h.bytes(&h.text); err != nil {
		return err
	}
	*s = string(h.text)
	return nil
}

// bytes reads a string value, unquoted, into *b (reusing it); any other
// value is skipped and leaves *b empty.
func (h *harReader) bytes(b *[]byte) error {
	dec := h.dec
	*b = (*b)[:0]
	if dec.PeekKind() != '"' {
		return dec.SkipValue()
	}
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	*b, err = jsontext.AppendUnquote(*b, v)
	return err
}

// A fielder reads or skips the value of one key of an object.
type fielder interface{ field(key []byte) error }

// object calls f.field for each key of the object dec is at, which must read
// or skip the value; a value that is not an object is skipped. The key is
// valid only during the call (it is not copied: keys are read without
// allocating).
func object(dec *jsontext.Decoder, f fielder) error {
	if dec.PeekKind() != '{' {
		return dec.SkipValue()
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	var buf [32]byte
	for dec.PeekKind() != '}' {
		v, err := dec.ReadValue()
		if err != nil {
			return err
		}
		if err := f.field(unquote(buf[:0], v)); err != nil {
			return err
		}
	}
	_, err := dec.ReadToken()
	return err
}

// unquote returns the text of the JSON string v: a slice of v when it has no
// escapes, else unquoted into buf.
func unquote(buf []byte, v jsontext.Value) []byte {
	if len(v) >= 2 && bytes.IndexByte(v, '\\') < 0 {
		return v[1 : len(v)-1]
	}
	b, _ := jsontext.AppendUnquote(buf, v)
	return b
}

// headerFields reads one header object of a HAR headers array, keeping
// the value of the header named want.
type headerFields struct {
	dec     *jsontext.Decoder
	want    [2][]byte  // the header names wanted (want[1] may be nil)
	to      [2]*string // where each one's value goes
	named   bool       // the name has been read
	match   int        // and it is want[match]; -1 for none
	early   []byte
	isEarly bool // early holds a value read before its name
	nameBuf [64]byte
}

func (f *headerFields) field(key []byte) error {
	dec := f.dec
	switch {
	case string(key) == "name" && dec.PeekKind() == '"':
		v, err := dec.ReadValue()
		if err != nil {
			return err
		}
		name := unquote(f.nameBuf[:0], v)
		f.named, f.match = true, -1
		for i, w := range f.want {
			if w != nil && bytes.EqualFold(name, w) {
				f.match = i
			}
		}
		if f.match >= 0 && f.isEarly {
			return f.set(f.early)
		}
		return nil
	case string(key) == "value" && dec.PeekKind() == '"' && (!f.named || f.match >= 0):
		v, err := dec.ReadValue()
		if err != nil {
			return err
		}
		if !f.named { // the value came before the name: keep it until then
			f.early, f.isEarly = append(f.early[:0], v...), true
			return nil
		}
		return f.set(v)
	}
	return dec.SkipValue()
}

func (f *headerFields) set(v jsontext.Value) error {
	b, err := jsontext.AppendUnquote(nil, v)
	*f.to[f.match] = string(b)
	return err
}

// headers walks a HAR headers array ([{"name": ..., "value": ...}]) and
// stores the values of the headers f.want names where f.to says; the other
// values are skipped unread.
func headers(dec *jsontext.Decoder, f *headerFields) error {
	if dec.PeekKind() != '[' {
		return dec.SkipValue()
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	f.dec = dec
	for dec.PeekKind() != ']' {
		f.named, f.match, f.isEarly = false, -1, false
		if err := object(dec, f); err != nil {
			return err
		}
	}
	_, err := dec.ReadToken()
	return err
}

// number reads a number value; any other value is skipped and reads as 0.
func number(dec *jsontext.Decoder) (float64, error) {
	if dec.PeekKind() != '0' {
		return 0, dec.SkipValue()
	}
	v, err := dec.ReadValue()
	if err != nil {
		return 0, err
	}
	f, _ := strconv.ParseFloat(string(v), 64)
	return f, nil
}
