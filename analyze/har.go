package analyze

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/xblgo/fgrl/internal/xblauth"
)

// ReadHAR reads a HAR 1.2 trace (what browsers, Fiddler and proxies
// export), streaming, and passes each entry to add as a Call (reused: add
// must copy what it keeps), its Authorization redacted, in trace order. An
// entry that lacks a method, URL or start time is skipped and named in
// Input.Problems; a file cut short or not valid JSON past some entry, or
// longer than MaxTraceBytes or MaxCalls entries, yields the calls before
// and Input.Stop. Either way the trace is not Complete. A string is read
// to its first 384 KiB (a body to its first MaxBody bytes); invalid UTF-8
// in it reads as U+FFFD. The error is for input that is no HAR at all.
func ReadHAR(r io.Reader, add func(*Call)) (Input, error) {
	in := Input{}
	cr := &cappedReader{r: r, left: maxTraceBytes}
	dec, cut := jsonDecoder(cr)
	if err := seekEntries(dec); err != nil {
		if cr.over {
			return in, fmt.Errorf("%w: HAR: no entries within its first %d MiB", ErrNotTrace, maxTraceBytes>>20)
		}
		return in, fmt.Errorf("%w: HAR: %v", ErrNotTrace, err)
	}
	decodeEntries(dec, cut, &in, func(c *Call) { in.Calls++; add(c) })
	if cr.over {
		in.stop(in.Calls+in.ProblemCount, cut.in, "%s", overLimit())
	}
	return in, nil
}

// HARLimits returns the limits data a HAR written by xblcall simulate
// names (the log's _fgrlLimits field, before its entries), or nil when it
// names none. It reads only up to the entries, at most maxLimitsScan bytes.
func HARLimits(r io.Reader) ([]byte, error) {
	dec, _ := jsonDecoder(io.LimitReader(r, maxLimitsScan))
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

// decodeEntries decodes the entries dec is at (inside the entries array)
// until the array ends or MaxCalls entries have been read; each becomes a
// call or a problem of in, and where it stops early is in's Stop.
func decodeEntries(dec *jsontext.Decoder, cut *jsonCutter, in *Input, call func(*Call)) {
	var h harReader
	for i := 0; ; i++ {
		kind := dec.PeekKind()
		off := cut.startOffset(dec)
		cut.forget(dec.InputOffset())
		switch {
		case kind == ']':
			return
		case kind == 0:
			_, err := dec.ReadToken()
			in.stop(i, cut.errOffset(err), "%s", stopReason(err, i, "entry"))
			return
		case i == MaxCalls:
			in.stop(i, off, "stopped after %d entries, the most one trace may hold", MaxCalls)
			return
		}
		c, bad, err := h.entry(dec, i, off)
		switch {
		case err != nil:
			in.stop(i, cut.errOffset(err), "%s", stopReason(err, i, "entry"))
			return
		case bad != "":
			in.problem(i, off, "%s", bad)
		default:
			call(c)
		}
	}
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
func (h *harReader) entry(dec *jsontext.Decoder, i int, off int64) (c *Call, bad string, err error) {
	h.c = Call{Index: i, Offset: off}
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
		return readString(h.dec, &h.reqBody)
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
			h.respBody = decodeBase64(h.respBody)
		}
		return err
	}
	return h.dec.SkipValue()
}

func (f *contentFields) field(key []byte) error {
	h := (*harReader)(f)
	switch string(key) {
	case "text":
		return readString(h.dec, &h.respBody)
	case "encoding":
		return h.str(&h.encoding)
	}
	return h.dec.SkipValue()
}

// str reads a string value into *s; any other value is skipped.
func (h *harReader) str(s *string) error {
	if err := readString(h.dec, &h.text); err != nil {
		return err
	}
	*s = string(h.text)
	return nil
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
	*f.to[f.match] = string(unquote(nil, v))
	return nil
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

// decodeBase64 decodes a body's base64 text in place: an undecodable body
// is no body, but a text cut at maxString (a body far longer than MaxBody)
// is decoded up to the cut.
func decodeBase64(b []byte) []byte {
	n, err := base64.StdEncoding.Decode(b, b)
	if err != nil && len(b) < maxString/2 { // \/ is the one escape base64 text has
		n = 0
	}
	return b[:n]
}
