// Package wiretest holds the services' wire format as public sources record
// it, for the tests of the typed client and of the mock: one exchange per
// typed call (the request XSAPI sends and the answer the service gives), and
// a shape diff that compares a JSON body with a recorded one by field names,
// nesting and JSON types.
//
// The exchanges live in testdata/*.txt, written in this project; each names
// the public source it mirrors. Neither the client nor the mock is derived
// from the other: both are checked against these files.
//
// A file is
//
//	# comment lines, naming the sources
//	caller: 2533274792693551
//	title: 1234567890
//	scid: 7492baca-c1b4-440d-a391-b7ef364a8d40 (when the call needs the title's)
//	before: SetPresence (exchanges whose state the answer depends on)
//	GET /users/xuid(2533274792693551)/scids/.../stats/a,b?query
//	x-xbl-contract-version: 1
//	-- request --
//	{ the JSON request body, or nothing }
//	-- response 200 --
//	{ the JSON answer, or nothing }
//
// The path is written exactly as it goes on the wire (escaped once).
package wiretest

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"net/textproto"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/xblgo/fgrl/internal/safetext"
)

//go:embed testdata/*.txt
var files embed.FS

// Exchange is one recorded request and its answer.
type Exchange struct {
	Name     string   // the typed call, such as "GetStats"
	Sources  []string // the comment lines: where the shapes come from
	Caller   string   // the XUID the call is made as
	Title    string   // the title the call is made for
	Scid     string   // the title's service configuration, when the call needs it
	Before   []string // exchanges the service must have seen first (state)
	Method   string
	RawPath  string     // the path as sent, escaped once
	Query    url.Values // the query, compared as a set
	RawQuery string     // the query as sent (its order, its commas unescaped)
	Header   map[string]string
	Request  []byte // the JSON request body, or nil
	Status   int
	Answer   []byte // the JSON answer, or nil
}

// Load returns the exchange recorded for a typed call.
func Load(name string) (*Exchange, error) {
	b, err := files.ReadFile("testdata/" + name + ".txt")
	if err != nil {
		return nil, fmt.Errorf("wiretest: no exchange recorded for %s", name)
	}
	x, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("wiretest: %s: %w", name, err)
	}
	x.Name = name
	return x, nil
}

// Names lists the recorded exchanges, sorted.
func Names() []string {
	ents, _ := files.ReadDir("testdata")
	var out []string
	for _, e := range ents {
		if n, ok := strings.CutSuffix(e.Name(), ".txt"); ok {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

const maxFile = 1 << 20

// Parse reads one exchange file.
func Parse(b []byte) (*Exchange, error) {
	if len(b) > maxFile {
		return nil, errors.New("file larger than 1 MiB")
	}
	head, rest, ok := bytes.Cut(b, []byte("\n-- request --\n"))
	if !ok {
		return nil, errors.New(`no "-- request --" line`)
	}
	x := &Exchange{Header: map[string]string{}}
	if err := x.parseHead(string(head)); err != nil {
		return nil, err
	}
	req, resp, ok := bytes.Cut(append([]byte{'\n'}, rest...), []byte("\n-- response "))
	if !ok {
		return nil, errors.New(`no "-- response STATUS --" line`)
	}
	statusLine, answer, ok := bytes.Cut(resp, []byte(" --\n"))
	if !ok {
		statusLine, ok = bytes.CutSuffix(bytes.TrimRight(resp, "\n"), []byte(" --"))
	}
	if !ok {
		return nil, errors.New(`malformed "-- response STATUS --" line`)
	}
	status, err := strconv.Atoi(string(statusLine))
	if err != nil || status < 100 || status > 599 {
		return nil, fmt.Errorf("bad status %s", safetext.Quote(string(statusLine), 80))
	}
	x.Status = status
	if x.Request, err = jsonOrNil(req, "request"); err != nil {
		return nil, err
	}
	if x.Answer, err = jsonOrNil(answer, "response"); err != nil {
		return nil, err
	}
	return x, nil
}

func (x *Exchange) parseHead(head string) error {
	sawLine := false
	for i, line := range strings.Split(head, "\n") {
		line = strings.TrimRight(line, "\r")
		switch {
		case line == "":
		case strings.HasPrefix(line, "#"):
			x.Sources = append(x.Sources, strings.TrimSpace(strings.TrimPrefix(line, "#")))
		case !sawLine && x.meta(line):
		case !sawLine:
			if err := x.parseRequestLine(line); err != nil {
				return fmt.Errorf("line %d: %w", i+1, err)
			}
			sawLine = true
		default:
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				return fmt.Errorf("line %d: want a header %s", i+1, safetext.Quote(line, 80))
			}
			x.Header[textproto.CanonicalMIMEHeaderKey(strings.TrimSpace(k))] = strings.TrimSpace(v)
		}
	}
	if !sawLine {
		return errors.New("no request line")
	}
	return nil
}

// meta reads a "caller:", "title:", "scid:" or "before:" line.
func (x *Exchange) meta(line string) bool {
	k, v, ok := strings.Cut(line, ": ")
	if !ok {
		return false
	}
	switch k {
	case "caller":
		x.Caller = v
	case "title":
		x.Title = v
	case "scid":
		x.Scid = v
	case "before":
		x.Before = strings.Fields(v)
	default:
		return false
	}
	return true
}

func (x *Exchange) parseRequestLine(line string) error {
	method, target, ok := strings.Cut(line, " ")
	if !ok || method == "" || !strings.HasPrefix(target, "/") {
		return fmt.Errorf("want METHOD /path, not %s", safetext.Quote(line, 80))
	}
	raw, q, _ := strings.Cut(target, "?")
	if _, err := url.PathUnescape(raw); err != nil {
		return fmt.Errorf("bad path: %w", err)
	}
	query, err := url.ParseQuery(q)
	if err != nil {
		return fmt.Errorf("bad query: %w", err)
	}
	x.Method, x.RawPath, x.Query, x.RawQuery = method, raw, query, q
	return nil
}

func jsonOrNil(b []byte, what string) ([]byte, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return nil, nil
	}
	if !json.Valid(b) {
		return nil, fmt.Errorf("the %s body is not JSON", what)
	}
	return b, nil
}

// URL returns the request's path and query as sent.
func (x *Exchange) URL() string {
	if x.RawQuery == "" {
		return x.RawPath
	}
	return x.RawPath + "?" + x.RawQuery
}
