package transport_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/xblgo/fgrl/transport"
)

// attack88URL is a read the limits data knows (profile settings).
const attack88URL = "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag"

// attack88Auth is an XBL3.0 Authorization of user uhs with token tok.
func attack88Auth(uhs, tok string) string { return "XBL3.0 x=" + uhs + ";" + tok }

// attack88Echo names everything the godoc says a shared answer depends on
// (credentials, scheme, host, URL, contract version, Accept,
// Accept-Encoding, Accept-Language), every spelling and every value, as
// the service would see it: the body a server that answers each request
// for what it asked would send.
func attack88Echo(r *http.Request) string {
	host := r.Host
	if host == "" {
		host = r.URL.Host
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s://%s %s host=%s", r.Method, strings.ToLower(r.URL.Scheme), strings.ToLower(r.URL.Host), r.URL.RequestURI(), strings.ToLower(host))
	var lines []string
	for k, vs := range r.Header {
		for _, name := range []string{"Authorization", "Signature", "Cookie", "Accept", "Accept-Encoding", "Accept-Language", "X-Xbl-Contract-Version"} {
			if strings.EqualFold(k, name) {
				lines = append(lines, fmt.Sprintf("%s=%q", k, vs))
			}
		}
	}
	sort.Strings(lines)
	b.WriteString(" " + strings.Join(lines, " "))
	return b.String()
}

// attack88Base answers each request with attack88Echo of what it received,
// after hold (when set) returns, and counts the requests.
type attack88Base struct {
	n    atomic.Int64
	hold func(*http.Request)
	// answer, when set, makes the response instead of the echo.
	answer func(*http.Request) *http.Response
}

func (b *attack88Base) RoundTrip(r *http.Request) (*http.Response, error) {
	b.n.Add(1)
	if b.hold != nil {
		b.hold(r)
	}
	if err := r.Context().Err(); err != nil {
		return nil, err
	}
	if b.answer != nil {
		resp := b.answer(r)
		if resp.Request == nil {
			resp.Request = r
		}
		return resp, nil
	}
	return attack88OK(r, attack88Echo(r), nil), nil
}

func attack88OK(r *http.Request, body string, h http.Header) *http.Response {
	if h == nil {
		h = http.Header{}
	}
	return &http.Response{StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)), Request: r}
}

func attack88Transport(base http.RoundTripper) *transport.Transport {
	return &transport.Transport{Base: base, TitleID: "1234567890", CoalesceReads: true, ReadCacheTTL: transport.MaxReadCacheTTL, DisableBudget: true}
}

// attack88Req builds a GET of url with Authorization auth.
func attack88Req(ctx context.Context, url, auth string) *http.Request {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		panic(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	return req
}

// attack88Do sends req and returns its body.
func attack88Do(t testing.TB, rt http.RoundTripper, req *http.Request) (string, error) {
	t.Helper()
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// attack88Concurrently runs fs at once and waits for them all.
func attack88Concurrently(fs ...func()) {
	var wg sync.WaitGroup
	for _, f := range fs {
		wg.Add(1)
		go func() { defer wg.Done(); f() }()
	}
	wg.Wait()
}
