package analyze

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// An entry of a HAR is walked field by field (harReader), keeping only
// what makes its Call.

var authorization, retryAfter, userAgent = []byte("Authorization"), []byte("Retry-After"), []byte("User-Agent")

// harReader decodes entries into one reused Call.
type harReader struct {
	dec                     *jsontext.Decoder
	hdr                     headerFields
	c                       Call
	started                 string
	reqBody, respBody, text []byte
	encoding                string
	seen                    uint16 // the fields read (the f bits below), each once
	bad                     string // why the entry is no call, once read
	hasRetryAfter           bool   // the answer names Retry-After (its value may be "")
}

// The fields of an entry a harReader reads, as bits: one named twice makes
// the entry a problem, since readers differ on which one counts (the last,
// for JSON.parse; both, merged, for a walk like this one).
const (
	fStarted uint16 = 1 << iota
	fTime
	fRequest
	fResponse
	fMethod
	fURL
	fRequestHeaders
	fPostData
	fRequestText
	fStatus
	fResponseHeaders
	fContent
	fResponseText
	fEncoding
	fWebSocket
)

// once reports whether field f of key is read for the first time in the
// entry; the second time, the entry is a problem.
func (h *harReader) once(f uint16, key []byte) bool {
	if h.seen&f != 0 {
		h.badf("%q twice in one object: readers differ on which counts", clip(string(key)))
		return false
	}
	h.seen |= f
	return true
}

// badf records why the entry is no call, if nothing did before.
func (h *harReader) badf(format string, args ...any) {
	if h.bad == "" {
		h.bad = fmt.Sprintf(format, args...)
	}
}

// entry reads one entry. bad is why a well-formed entry is skipped; err is
// a syntax error, after which the stream cannot go on.
func (h *harReader) entry(dec *jsontext.Decoder, i int, off int64) (c *Call, bad string, err error) {
	h.c = Call{Index: i, Offset: off}
	h.dec = dec
	h.started, h.reqBody, h.respBody, h.seen, h.bad, h.hasRetryAfter = "", h.reqBody[:0], h.respBody[:0], 0, "", false
	if dec.PeekKind() != '{' {
		return nil, "not an object", dec.SkipValue()
	}
	if err := object(dec, (*entryFields)(h)); err != nil {
		return nil, "", err
	}
	t, perr := time.Parse(time.RFC3339Nano, h.started)
	switch {
	case h.bad != "":
		return nil, h.bad, nil
	case perr != nil:
		return nil, fmt.Sprintf("startedDateTime %s is not an ISO 8601 time", shownValue(h.started)), nil
	case !countable(t):
		return nil, uncountable("startedDateTime", t), nil
	case h.c.Method == "" || h.c.URL == "":
		return nil, "the request has no method or url", nil
	case h.seen&fStatus == 0:
		return nil, "the entry has no response status (HAR 1.2 requires response and its status)", nil
	}
	if bad := cmp.Or(urlProblem(h.c.URL), retryAfterProblem(h.c.Status, h.hasRetryAfter, h.c.RetryAfter)); bad != "" {
		return nil, bad, nil
	}
	h.c.Time = t
	h.c.RequestBody, h.c.ResponseBody = h.reqBody, h.respBody
	if h.c.Authorization != "" {
		h.c.Authorization = redactAuth(h.c.Authorization) // the token is never kept
	}
	h.c.cut()
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
		return h.read(fStarted, key, func() error { return h.str(&h.started) })
	case "time":
		return h.read(fTime, key, func() error {
			ms, err := number(h.dec)
			h.c.Duration = elapsed(ms)
			return err
		})
	case "request":
		return h.read(fRequest, key, func() error { return object(h.dec, (*requestFields)(h)) })
	case "response":
		return h.read(fResponse, key, func() error { return object(h.dec, (*responseFields)(h)) })
	case "_webSocketMessages":
		return h.read(fWebSocket, key, h.countMessages)
	}
	return h.skip(key, "startedDateTime", "time", "request", "response")
}

// countMessages counts the elements of a websocket's messages array
// (Chrome's _webSocketMessages), skipping each: the messages are not
// calls, and none is kept.
func (h *harReader) countMessages() error {
	if h.dec.PeekKind() != '[' {
		return h.dec.SkipValue()
	}
	if _, err := h.dec.ReadToken(); err != nil {
		return err
	}
	for h.dec.PeekKind() != ']' {
		if err := h.dec.SkipValue(); err != nil {
			return err
		}
		h.c.WebSocketMessages++
	}
	_, err := h.dec.ReadToken()
	return err
}

func (f *requestFields) field(key []byte) error {
	h := (*harReader)(f)
	switch string(key) {
	case "method":
		return h.read(fMethod, key, func() error { return h.str(&h.c.Method) })
	case "url":
		return h.read(fURL, key, func() error { return h.str(&h.c.URL) })
	case "headers":
		return h.read(fRequestHeaders, key, func() error {
			h.hdr.want, h.hdr.to = [2][]byte{authorization, userAgent}, [2]*string{&h.c.Authorization, &h.c.UserAgent}
			return h.headers()
		})
	case "postData":
		return h.read(fPostData, key, func() error { return object(h.dec, (*postDataFields)(h)) })
	}
	return h.skip(key, "method", "url", "headers", "postData")
}

func (f *postDataFields) field(key []byte) error {
	h := (*harReader)(f)
	if string(key) == "text" {
		return h.read(fRequestText, key, func() error { return readString(h.dec, &h.reqBody) })
	}
	return h.skip(key, "text")
}

func (f *responseFields) field(key []byte) error {
	h := (*harReader)(f)
	switch string(key) {
	case "status":
		return h.read(fStatus, key, h.status)
	case "headers":
		return h.read(fResponseHeaders, key, func() error {
			h.hdr.want, h.hdr.to = [2][]byte{retryAfter, nil}, [2]*string{&h.c.RetryAfter, nil}
			err := h.headers()
			h.hasRetryAfter = h.hdr.got[0]
			return err
		})
	case "content":
		return h.read(fContent, key, func() error {
			h.encoding = ""
			err := object(h.dec, (*contentFields)(h))
			if err == nil && strings.EqualFold(h.encoding, "base64") {
				h.respBody = decodeBase64(h.respBody)
			}
			return err
		})
	}
	return h.skip(key, "status", "headers", "content")
}

func (f *contentFields) field(key []byte) error {
	h := (*harReader)(f)
	switch string(key) {
	case "text":
		return h.read(fResponseText, key, func() error { return readString(h.dec, &h.respBody) })
	case "encoding":
		return h.read(fEncoding, key, func() error { return h.str(&h.encoding) })
	}
	return h.skip(key, "text", "encoding")
}

// skip skips the value of a key the entry does not read. A key that is
// one of names in another case (foldedName: "Text", "teXt", "ſtatus")
// makes the entry a problem: encoding/json reads it as that field, the
// last of them counting, where JSON.parse and this reader read the exact
// name.
func (h *harReader) skip(key []byte, names ...string) error {
	for _, n := range names {
		if foldedName(key, n) {
			h.badf("%q is %q in another case: readers differ on which counts", clip(string(key)), n)
			break
		}
	}
	return h.dec.SkipValue()
}

// read reads the value of key, field f, with read the first time the entry
// names it; the second time it skips it, and the entry is a problem.
func (h *harReader) read(f uint16, key []byte, read func() error) error {
	if !h.once(f, key) {
		return h.dec.SkipValue()
	}
	return read()
}

// status reads the answer's status: 0 (no answer, as browsers record a
// request that got none) or an integer from 100 to 999. Any other value
// (a string, a fraction, a number out of range) makes the entry a
// problem: a HAR viewer shows what the analysis would read as another.
func (h *harReader) status() error {
	kind := h.dec.PeekKind()
	if kind != '0' {
		h.badf("status is not a number")
		return h.dec.SkipValue()
	}
	v, err := h.dec.ReadValue()
	if err != nil {
		return err
	}
	n, ok := parseStatus([]byte(v))
	if !ok {
		h.badf("status %s is not 0 nor an integer from 100 to 999", shownValue(string(v)))
	}
	h.c.Status = n
	return nil
}

// str reads a string value into *s; any other value is skipped.
func (h *harReader) str(s *string) error {
	if err := readString(h.dec, &h.text); err != nil {
		return err
	}
	*s = string(h.text)
	return nil
}

// headerFields reads one header object of a HAR headers array as JSON.parse
// reads it: the last "name" and the last "value" count, whatever their
// order, and the header is known only once the object is read whole.
type headerFields struct {
	dec     *jsontext.Decoder
	want    [2][]byte  // the header names wanted (want[1] may be nil)
	to      [2]*string // where each one's value goes
	name    []byte     // the last "name", when a string of at most maxHeaderName bytes
	named   bool
	value   []byte // the last "value", when a string
	valued  bool
	nameBuf [maxHeaderName]byte
	got     [2]bool // each wanted header seen in this array
	twice   string  // why readers differ on the array: a wanted header named twice, or "name" or "value" in another case
}

// maxHeaderName bounds the header names kept: no name wanted is longer.
const maxHeaderName = 64

func (f *headerFields) field(key []byte) error {
	dec := f.dec
	switch string(key) {
	case "name":
		f.named = false
		if dec.PeekKind() != '"' {
			return dec.SkipValue()
		}
		v, err := dec.ReadValue()
		if err != nil {
			return err
		}
		if name := unquote(f.nameBuf[:0], v); len(name) <= maxHeaderName {
			f.name, f.named = append(f.name[:0], name...), true // v is the decoder's until its next read
		}
		return nil
	case "value":
		f.valued = dec.PeekKind() == '"'
		return readString(dec, &f.value)
	}
	if foldedName(key, "name") || foldedName(key, "value") {
		f.twice = fmt.Sprintf("%q in a header is \"name\" or \"value\" in another case", clip(string(key))) // encoding/json reads it so
	}
	return dec.SkipValue()
}

// keep stores the header's value where f.to says, when its name is one
// f.want names. A value that is no string (a Retry-After of 60, a number)
// is kept as "", the header named all the same: named again, it is named
// twice, and a 429's is then a problem (retryAfterProblem).
func (f *headerFields) keep() {
	if !f.named {
		return
	}
	for i, w := range f.want {
		if w != nil && bytes.EqualFold(f.name, w) {
			if f.got[i] {
				f.twice = fmt.Sprintf("%q twice in the headers", w)
			}
			*f.to[i], f.got[i] = "", true
			if f.valued {
				*f.to[i] = string(f.value)
			}
		}
	}
}

// headers reads a headers array of the entry into h.hdr.to; a header it
// reads named twice (two Authorization headers: net/http takes the first,
// this reader the last) makes the entry a problem.
func (h *harReader) headers() error {
	err := headers(h.dec, &h.hdr)
	if h.hdr.twice != "" {
		h.badf("%s: readers differ on which counts", h.hdr.twice)
	}
	return err
}

// headers walks a HAR headers array ([{"name": ..., "value": ...}]) and
// stores the values of the headers f.want names where f.to says.
func headers(dec *jsontext.Decoder, f *headerFields) error {
	if dec.PeekKind() != '[' {
		return dec.SkipValue()
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	f.dec, f.got, f.twice = dec, [2]bool{}, ""
	for dec.PeekKind() != ']' {
		f.named, f.valued = false, false
		if err := object(dec, f); err != nil {
			return err
		}
		f.keep()
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
