package client

// The breaks an outside attack on package client found (2026-12-04), a
// hostile service's answers, each a test that failed before its fix.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/xblsign"
	"github.com/xblgo/fgrl/transport"
)

const (
	hostileToken = "XBL3.0 x=1111;SECRET-HOSTILE-TOKEN-abcdef"
	hostileSig   = "SECRET-HOSTILE-SIGNATURE"
)

// hostileClient points every host named at srv, through rt (nil: the
// default fgrl transport on an http.Transport of its own), with a token
// and signature the tests look for.
func hostileClient(t *testing.T, srv *httptest.Server, rt http.RoundTripper, hosts ...string) *Client {
	t.Helper()
	ep := map[string]string{}
	for _, h := range hosts {
		ep[h] = srv.URL
	}
	base := &http.Transport{}
	t.Cleanup(base.CloseIdleConnections)
	if rt == nil {
		rt = &transport.Transport{TitleID: title, Base: base}
	}
	c, err := New(Config{TitleID: title, Transport: rt, Endpoints: ep,
		Tokens: TokenFunc(func(context.Context, string) (Token, error) {
			return Token{Authorization: hostileToken, Signature: hostileSig}, nil
		})})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// keyRTAClient is a Client whose RTA host is at url, over a plain
// transport, with a token bound to the proof key key.
func keyRTAClient(t *testing.T, url string, key *ecdsa.PrivateKey) *Client {
	t.Helper()
	c, err := New(Config{TitleID: title, RTATransport: plainTransport(t), Endpoints: map[string]string{"rta.xboxlive.com": url},
		Tokens: TokenFunc(func(context.Context, string) (Token, error) {
			return Token{Authorization: "XBL3.0 x=-;T", Key: key}, nil
		})})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// failFastProfiles is GetProfiles as me of my own gamertag, FailFast (no
// waiting, no retry), within 5 s: one call whose error a test reads.
func failFastProfiles(c *Client) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := c.As(me).GetProfiles(transport.WithPolicy(ctx, transport.Policy{FailFast: true}), []string{me}, []string{"Gamertag"})
	return err
}

// write429 answers 429 with an FGRL body whose debugMessage is msg.
func write429(w http.ResponseWriter, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(429)
	b, _ := json.Marshal(map[string]any{"code": 429, "source": "x", "currentRequests": 11, "maxRequests": 10,
		"periodInSeconds": 15, "limitType": "Rate", "debugMessage": msg})
	w.Write(b)
}

// plainTransport is an http.Transport closed at the test's end: a
// Config.Transport that is not fgrl's, which follows what the client's
// http.Client tells it.
func plainTransport(t *testing.T) *http.Transport {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}

// TestPagesThatGoRoundEnd: a listing whose continuation tokens go round
// (A, B, A, B, ...) with empty pages, so the caller is never handed an
// item and cannot break, made AllAchievements fetch for ever (74,157
// requests in 3 s); one whose pages never hold an item, with ever new
// tokens, too. Both end with an *Error.
func TestPagesThatGoRoundEnd(t *testing.T) {
	var n atomic.Int64
	var fresh atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := n.Add(1)
		next := "A"
		switch {
		case fresh.Load():
			next = fmt.Sprint("T", i)
		case r.URL.Query().Get("continuationToken") == "A":
			next = "B"
		}
		fmt.Fprintf(w, `{"achievements":[],"pagingInfo":{"continuationToken":%q}}`, next)
	}))
	defer srv.Close()
	for _, tc := range []struct {
		name   string
		fresh  bool
		most   int64
		reason string
	}{{"tokens going round", false, 3, "came back"}, {"never an item", true, maxEmptyPages, "without an item"}} {
		t.Run(tc.name, func(t *testing.T) {
			n.Store(0)
			fresh.Store(tc.fresh)
			c := hostileClient(t, srv, plainTransport(t), "achievements.xboxlive.com")
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var last error
			for _, err := range c.As(me).AllAchievements(ctx, me, title, 10) {
				last = err
			}
			var e *Error
			if !errors.As(last, &e) || !strings.Contains(e.Message, tc.reason) || ctx.Err() != nil {
				t.Errorf("the listing ended with %v after %d requests, want an *Error saying %q before the deadline", last, n.Load(), tc.reason)
			}
			if got := n.Load(); got > tc.most {
				t.Errorf("%d requests, want at most %d", got, tc.most)
			}
		})
	}
}

// TestAnswerTooDenseRefused: an answer within maxResponse made of `{}`
// (three bytes, each a whole Achievement in Go) left 81 times its size
// live, and one of `null`s (a second attack) 255 times; one whose lists
// hold an element for every fewer than 16 bytes is refused before it is
// decoded.
func TestAnswerTooDenseRefused(t *testing.T) {
	for _, elem := range []string{`{}`, `null`, `0`, `[]`, `{"z":0}`} {
		const size = 1 << 20
		var body bytes.Buffer
		body.WriteString(`{"achievements":[` + elem)
		for body.Len() < size-64 {
			body.WriteString(`,` + elem)
		}
		body.WriteString(`],"pagingInfo":{"continuationToken":""}}`)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(body.Bytes()) }))
		c := hostileClient(t, srv, plainTransport(t), "achievements.xboxlive.com")
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		p, err := c.As(me).ListAchievements(context.Background(), me, title, 0, "")
		runtime.ReadMemStats(&after)
		srv.Close()
		var e *Error
		if !errors.As(err, &e) || !strings.Contains(e.Message, "malformed response body") {
			t.Errorf("a list of %s: %d items, %v; want the answer refused as malformed", elem, len(p.Items), err)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8*uint64(body.Len()) {
			t.Errorf("a %d-byte list of %s allocated %d bytes (%.0fx)", body.Len(), elem, alloc, float64(alloc)/float64(body.Len()))
		}
	}
	// The services' recorded answers pass.
	files, _ := filepath.Glob("../mock/testdata/recorded/*/*.json")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if n := elements(b); n > 1024 && n > len(b)/minElementBytes {
			t.Errorf("%s: %d elements in %d bytes would be refused", f, n, len(b))
		}
	}
	if len(files) < 10 {
		t.Errorf("%d recorded answers found", len(files))
	}
	for _, tc := range []struct {
		s    string
		want int
	}{
		{`{"a":"[1,2]","b":[{"c":"\"[,"},null, [ ] ,[1]]}`, 7}, {`[]`, 0}, {` [ ] `, 0}, {`[null]`, 1}, {`[[],[]]`, 2}, {`[{}]`, 2},
		{`"\\"[1,2]`, 2}, {"[\"\xff\\\"[\",1]", 2}, {`"\u0022[1,2]"`, 0},
	} {
		if n := elements([]byte(tc.s)); n != tc.want {
			t.Errorf("elements(%s) = %d, want %d (list elements and objects; brackets, braces and commas in strings are text)", tc.s, n, tc.want)
		}
	}
}

// TestRedirectToAnotherOriginNotFollowed: through a Config.Transport that
// is not fgrl's, a redirect to another origin carried the Signature (to
// any host) and the Authorization (to the same name on another port). It
// is now the call's answer, an error; a redirect within the origin is
// still followed.
func TestRedirectToAnotherOriginNotFollowed(t *testing.T) {
	var mu sync.Mutex
	var stolen []http.Header
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		stolen = append(stolen, r.Header.Clone())
		mu.Unlock()
		io.WriteString(w, `{"profileUsers":[]}`)
	}))
	defer evil.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(evil.URL, "http://"))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://localhost:"+port+"/steal", http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	c := hostileClient(t, srv, plainTransport(t), "profile.xboxlive.com")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := c.As(me).GetProfiles(ctx, []string{me}, []string{"Gamertag"})
	var e *Error
	if !errors.As(err, &e) || e.StatusCode != http.StatusTemporaryRedirect {
		t.Errorf("a redirect to another origin: %v, want the 307 as the call's error", err)
	}
	mu.Lock()
	for _, h := range stolen {
		t.Errorf("a redirect was followed to another origin carrying Authorization %q, Signature %q", h.Get("Authorization"), h.Get("Signature"))
	}
	mu.Unlock()
	within := httptest.NewRequest("GET", srv.URL+"/b", nil)
	if err := sameOrigin(within, []*http.Request{httptest.NewRequest("GET", srv.URL+"/a", nil)}); err != nil {
		t.Errorf("a redirect within the origin is refused: %v", err)
	}
}

// TestErrorTextBounded: net/http's errors quote a service's header lines
// and redirect URLs (50 to 60 KB of them, escape codes and all), and a
// service may echo the caller's token in its error body: an *Error's text
// is clipped, escaped and carries neither token nor signature.
func TestErrorTextBounded(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    http.HandlerFunc
	}{
		{"malformed header line", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Junk", "\x1b[31m"+strings.Repeat("9", 50000))
			w.WriteHeader(200)
		}},
		{"long location", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Location", "/"+strings.Repeat("%1b", 20000))
			w.WriteHeader(302)
		}},
		{"401 echoing the credentials", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(401)
			io.WriteString(w, r.Header.Get("Authorization")+r.Header.Get("Signature"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.h)
			defer srv.Close()
			c := hostileClient(t, srv, nil, "profile.xboxlive.com")
			err := failFastProfiles(c)
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if strings.Contains(msg, "SECRET") {
				t.Errorf("the error carries a credential: %.300q", msg)
			}
			if len(msg) > 1024 || strings.ContainsAny(msg, "\x1b\n") {
				t.Errorf("the error's text is %d bytes, escapes %v: %.300q", len(msg), strings.ContainsAny(msg, "\x1b\n"), msg)
			}
		})
	}
}

// TestRTAHandshakeErrorClipped: a 1 MB header in a malformed upgrade
// answer reached the caller's ConnectionState.Err whole.
func TestRTAHandshakeErrorClipped(t *testing.T) {
	big := strings.Repeat("A", 1<<20)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, rw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: x\x1b[31m" + big + "\r\n\r\n")
		rw.Flush()
		bufio.NewReader(conn).ReadByte()
	}))
	defer srv.Close()
	c, err := New(Config{TitleID: title, RTATransport: plainTransport(t), Endpoints: map[string]string{"rta.xboxlive.com": srv.URL},
		Tokens: TokenFunc(func(context.Context, string) (Token, error) { return Token{Authorization: hostileToken}, nil })})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ch, err := c.As(me).Subscribe(ctx, PresenceOf(me))
	if err != nil {
		t.Fatal(err)
	}
	ev := <-ch
	cancel()
	for range ch {
	}
	cs, ok := ev.(*ConnectionState)
	if !ok || cs.Err == nil {
		t.Fatalf("first event %#v, want a ConnectionState with the refusal", ev)
	}
	if msg := cs.Err.Error(); len(msg) > 1024 || strings.Contains(msg, "\x1b") {
		t.Errorf("ConnectionState.Err holds the server's header: %d bytes, starts %.160q", len(msg), msg)
	}
}

// TestRTAUpgradeSignedWithProofKey: Token.Key says every request is signed
// with it; the RTA upgrade was not (XSAPI signs its GET:
// xbox_web_socket_client::connect sets the signature it gets with the
// token).
func TestRTAUpgradeSignedWithProofKey(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan http.Header, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case got <- r.Header.Clone():
		default:
		}
		w.WriteHeader(503)
	}))
	defer srv.Close()
	c := keyRTAClient(t, srv.URL, key)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	ch, err := c.As("").Subscribe(ctx, Sessions())
	if err != nil {
		t.Fatal(err)
	}
	var h http.Header
	select {
	case h = <-got:
	case <-ctx.Done():
	}
	cancel()
	for range ch {
	}
	if h == nil {
		t.Fatal("no upgrade came")
	}
	if _, err := xblsign.ParseHeader(h.Get("Signature")); err != nil {
		t.Errorf("the RTA upgrade made with a proof-key token is not signed: Signature %q (%v)", h.Get("Signature"), err)
	}
}

// TestGetPresenceOfAnotherUserRefused: GetPresence(X) without a batch
// window returned whatever record the service answered, another user's
// included, where GetProfile refuses an answer without X's record.
func TestGetPresenceOfAnotherUserRefused(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"xuid":%q,"state":"Online"}`, me)
	}))
	defer srv.Close()
	c := hostileClient(t, srv, plainTransport(t), "userpresence.xboxlive.com")
	if p, err := c.As(me).GetPresence(context.Background(), other); err == nil {
		t.Errorf("GetPresence(%s) returned the presence of %s with no error", other, p.XUID)
	}
}

// TestBatchedLookupCancelledIsError: "every failure of a call is an
// *Error"; a lookup merged into a batch (BatchWindow) that its caller's
// deadline ended returned the bare context error.
func TestBatchedLookupCancelledIsError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer srv.Close()
	defer srv.CloseClientConnections()
	c, err := New(Config{TitleID: title, Transport: plainTransport(t), BatchWindow: 50 * time.Millisecond,
		Endpoints: map[string]string{"profile.xboxlive.com": srv.URL, "userpresence.xboxlive.com": srv.URL},
		Tokens:    TokenFunc(func(context.Context, string) (Token, error) { return Token{Authorization: hostileToken}, nil })})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	var e *Error
	if _, err := c.As(me).GetProfile(ctx, other, []string{"Gamertag"}); !errors.As(err, &e) || e.API != "GetProfile" || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("GetProfile (BatchWindow) past its deadline: %T %v, want an *Error of GetProfile wrapping the deadline", err, err)
	}
	if _, err := c.As(me).GetPresence(ctx, other); !errors.As(err, &e) || e.API != "GetPresence" {
		t.Errorf("GetPresence (BatchWindow) past its deadline: %T %v, want an *Error of GetPresence", err, err)
	}
}
