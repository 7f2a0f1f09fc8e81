package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/xblgo/fgrl/hresult"
	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/internal/xblauth"
	"github.com/xblgo/fgrl/transport"
)

// maxResponse bounds the bodies a call reads.
const maxResponse = 16 << 20

// api describes one typed call.
type api struct {
	service  string // for errors, such as "profile"
	name     string // such as "GetProfiles"
	host     string // such as "profile.xboxlive.com"
	contract string // x-xbl-contract-version
	once     bool   // not idempotent: XSAPI never retries it
	rule     string // the limits rule the call counts against, when its path cannot tell
	pathHas  string // for ContractVersion, where one host has two contracts: the paths holding this
}

// call sends one request as u and decodes a 2xx JSON answer into out (if not
// nil). It reports the status of a 2xx answer.
func (u *User) call(ctx context.Context, a api, method string, p reqPath, q url.Values, in, out any) (int, error) {
	req, err := u.request(ctx, a, method, p, q, in)
	if err != nil {
		return 0, err
	}
	resp, err := u.c.http.Do(req)
	if err != nil {
		return 0, transportError(a, err, xblauth.Secrets{}.HeaderSecrets(req.Header))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	switch {
	case err != nil: // net/http's read errors quote what the service sent, which may echo the credentials
		code := hresult.Of(err)
		if resp.StatusCode < 200 || resp.StatusCode > 299 { // the status says more than the broken body
			code = hresult.FromStatus(resp.StatusCode)
		}
		return 0, &Error{code: code, StatusCode: resp.StatusCode, Service: a.service, API: a.name,
			Err: xblauth.Secrets{}.HeaderSecrets(req.Header, sentHeader(resp)).ScrubError(err)}
	case len(body) > maxResponse:
		return 0, &Error{code: hresult.E_FAIL, StatusCode: resp.StatusCode, Service: a.service, API: a.name,
			Message: fmt.Sprintf("response larger than %d bytes", maxResponse)}
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		if resp.StatusCode == http.StatusNotModified {
			return resp.StatusCode, nil // XSAPI treats 304 as success
		}
		return 0, &Error{code: hresult.FromStatus(resp.StatusCode), StatusCode: resp.StatusCode,
			Service: a.service, API: a.name, Message: message(body, xblauth.Secrets{}.HeaderSecrets(req.Header, sentHeader(resp)))}
	}
	if out != nil && len(bytes.TrimSpace(body)) > 0 {
		if n := elements(body); n > 1024 && n > len(body)/minElementBytes {
			return 0, &Error{code: hresult.E_UNEXPECTED, StatusCode: resp.StatusCode, Service: a.service, API: a.name,
				Message: fmt.Sprintf("malformed response body: %d list elements in %d bytes", n, len(body))}
		}
		if err := json.Unmarshal(body, out); err != nil {
			return 0, &Error{code: hresult.E_UNEXPECTED, StatusCode: resp.StatusCode, Service: a.service, API: a.name,
				Message: "malformed response body", Err: err}
		}
	}
	return resp.StatusCode, nil
}

// minElementBytes bounds what an answer may decode to: one that holds a
// list element or an object for every fewer bytes than this (past the
// first 1,024) is refused before it is decoded. Each element of a list
// decodes into a whole value of its type, whatever it says: `{}` or
// `null` (three and five bytes) become a 230-byte Achievement, so 16 MiB
// of them would hold gigabytes; and an object where a pointer field is,
// `{"detail":{}}`, a whole record more. At 16 bytes each the answers
// decode to at most about fifteen times their size. The services'
// recorded answers spend 47 bytes and more on each
// (mock/testdata/recorded).
const minElementBytes = 16

// maxNesting is the deepest nesting encoding/json decodes.
const maxNesting = 10000

// elements counts the elements of the JSON lists in body and its objects
// (outside strings); nesting deeper than maxNesting counts as more than
// any body may hold.
func elements(body []byte) int {
	var lists []bool // each open container: whether it is a list
	n, in, esc, first := 0, false, false, false
	for _, c := range body {
		if in {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				in = false
			}
			continue
		}
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		if first { // the first thing in a list: an element unless it ends it
			first = false
			if c != ']' {
				n++
			}
		}
		switch c {
		case '"':
			in = true
		case '[', '{':
			if len(lists) == maxNesting {
				return math.MaxInt
			}
			lists = append(lists, c == '[')
			first = c == '['
			if c == '{' {
				n++
			}
		case ']', '}':
			if len(lists) > 0 {
				lists = lists[:len(lists)-1]
			}
		case ',':
			if len(lists) > 0 && lists[len(lists)-1] {
				n++
			}
		}
	}
	return n
}

// request builds the request with the headers XSAPI sends.
func (u *User) request(ctx context.Context, a api, method string, p reqPath, q url.Values, in any) (*http.Request, error) {
	tok, err := u.c.cfg.Tokens.Token(ctx, u.xuid)
	if err == nil && tok.Authorization == "" {
		err = ErrNoToken
	}
	if err != nil {
		return nil, &Error{code: hresult.E_XBL_AUTH_NO_TOKEN, Service: a.service, API: a.name,
			Message: "no token for user " + u.xuid + " in sandbox " + u.c.cfg.Sandbox, Err: err}
	}
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, &Error{code: hresult.E_INVALIDARG, Service: a.service, API: a.name, Err: err}
		}
		body = bytes.NewReader(b)
	}
	// The attempt timeout covers reading the answer, as XSAPI's does; a
	// call that is not idempotent is sent once; the call names its rule.
	ctx = transport.WithPolicy(ctx, transport.Policy{BoundBody: true, NoRetry: a.once, Rule: a.rule})
	var sign transport.Signer
	if tok.Key != nil {
		sign = u.c.signer(a.host, tok.Key)
		ctx = transport.WithSigner(ctx, sign)
	}
	req, err := http.NewRequestWithContext(ctx, method, "https://"+a.host+"/", body)
	if err != nil {
		return nil, &Error{code: hresult.E_INVALIDARG, Service: a.service, API: a.name, Err: err}
	}
	req.URL = u.c.url(a.host, p, q)
	req.Host = a.host
	h := req.Header
	h.Set("Authorization", tok.Authorization)
	if tok.Signature != "" && tok.Key == nil {
		h.Set("Signature", tok.Signature)
	}
	h.Set("x-xbl-contract-version", a.contract)
	h.Set("Accept-Language", u.c.cfg.AcceptLanguage)
	h.Set("Accept", "application/json")
	h.Set("User-Agent", u.c.userAgent)
	h.Set("Content-Type", "application/json; charset=utf-8") // XSAPI sets it on every call
	if sign != nil && !u.c.signsEachAttempt {
		if err := sign(req); err != nil {
			return nil, &Error{code: hresult.E_XBL_AUTH_NO_TOKEN, Service: a.service, API: a.name, Message: "cannot sign the request", Err: err}
		}
	}
	return req, nil
}

// url returns the request URL for host and path, honouring Endpoints. The
// path is escaped once: RawPath holds it as sent.
func (c *Client) url(host string, p reqPath, q url.Values) *url.URL {
	u := &url.URL{Scheme: "https", Host: host, Path: p.Path, RawPath: p.Raw, RawQuery: q.Encode()}
	if o, ok := c.endpoints[host]; ok {
		u.Scheme, u.Host = o.Scheme, o.Host
		u.Path = strings.TrimSuffix(o.Path, "/") + p.Path
		u.RawPath = strings.TrimSuffix(o.EscapedPath(), "/") + p.Raw
	}
	return u
}

// lacks reports an answer that lacks what the service always sends: the
// call fails rather than return an empty value with a nil error.
func lacks(a api, status int, what string) error {
	return &Error{code: hresult.E_UNEXPECTED, StatusCode: status, Service: a.service, API: a.name,
		Message: "the answer lacks " + what}
}

// onlyAsked checks a batch answer's records against the users asked for:
// a record of a user not asked for, or a second record of one user, makes
// the whole answer an error (a service answering so may give one user
// another's record, and no record of it can be trusted).
func onlyAsked[T any](a api, status int, asked []string, records []T, xuid func(T) string) error {
	want := make(map[string]bool, len(asked))
	for _, x := range asked {
		want[x] = true
	}
	for _, r := range records {
		if x := xuid(r); !want[x] {
			return lacks(a, status, "only records of the users asked for (one names "+safetext.Quote(x, 32)+")")
		}
	}
	return onceEach(a, status, records, xuid)
}

// onceEach checks a page's items for one named twice (by id): two records
// of one thing in a page are two answers, of which the caller cannot tell
// the true one.
func onceEach[T any](a api, status int, items []T, id func(T) string) error {
	seen := make(map[string]bool, len(items))
	for _, it := range items {
		k := id(it)
		if seen[k] {
			return lacks(a, status, "one record of each (two name "+safetext.Quote(k, 40)+")")
		}
		seen[k] = true
	}
	return nil
}

// eachNamed checks a list's records for one without the field that names
// it (field, as the service spells it): a null in a list the service
// fills with records decodes to a record naming nothing, which is no
// record.
func eachNamed[T any](a api, status int, field string, items []T, id func(T) string) error {
	for _, it := range items {
		if id(it) == "" {
			return lacks(a, status, "a "+field+" in each record")
		}
	}
	return nil
}

// notNegative checks a count an answer gives (a page's total): a
// negative one is no count.
func notNegative(a api, status int, name string, n int) error {
	if n < 0 {
		return lacks(a, status, "a "+name+" of 0 or more, not "+strconv.Itoa(n))
	}
	return nil
}

// transportError describes a call that got no usable response, without
// the credentials in ss (net/http's errors may quote a service's text). A
// throttled call keeps the *transport.ThrottleError in its chain and
// takes its status and HRESULT.
func transportError(a api, err error, ss xblauth.Secrets) error {
	e := &Error{code: hresult.Of(err), Service: a.service, API: a.name, Err: ss.ScrubError(err)}
	var te *transport.ThrottleError
	if errors.As(err, &te) {
		e.StatusCode = te.Status
		if te.Body != nil && te.Body.DebugMessage != "" {
			e.Message = clip(ss.Scrub(te.Body.DebugMessage)) // the transport scrubbed the attempt's own before clipping
		}
	}
	return e
}

// sentHeader is the header of the request resp answers, as it was sent
// (the transport's last attempt: a renewed token, its own signature); nil
// when resp does not say.
func sentHeader(resp *http.Response) http.Header {
	if resp.Request == nil {
		return nil
	}
	return resp.Request.Header
}

// message extracts a short description from an error body, without the
// credentials in ss: the JSON "description", "message" or "code" field (ss
// taken out once it is decoded, which undoes escapes such as \u0053), or
// the start of a text body.
func message(body []byte, ss xblauth.Secrets) string {
	var j struct {
		Code        string `json:"code"`
		Description string `json:"description"`
		Message     string `json:"message"`
	}
	if json.Unmarshal(body, &j) == nil {
		for _, s := range []string{j.Description, j.Message, j.Code} {
			if s != "" {
				return clip(ss.Scrub(s))
			}
		}
		return ""
	}
	return clip(ss.Scrub(strings.TrimSpace(string(body))))
}

// clip makes text from the service safe for an error: escaped and at most
// 200 bytes.
func clip(s string) string { return safetext.Clip(s, 200) }
