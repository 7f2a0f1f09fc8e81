package transport_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/xblgo/fgrl/internal/racebuild"
	"github.com/xblgo/fgrl/internal/scaletest"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/transport"
)

const attack66XUID = "2533274791234567"

type attack66RT func(*http.Request) (*http.Response, error)

func (f attack66RT) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// attack66429Base answers 429 with a body whose limitType and debugMessage quote
// the request as the service saw it on the wire (RequestURI: the escaped
// path and query) and, in debugMessage, the posted body.
func attack66429Base() http.RoundTripper {
	return attack66RT(func(r *http.Request) (*http.Response, error) {
		var posted []byte
		if r.Body != nil {
			posted, _ = io.ReadAll(r.Body)
		}
		lt, _ := jsonString("Rate " + r.URL.RequestURI())
		dm, _ := jsonString("refused " + r.URL.RequestURI() + " " + string(posted))
		body := `{"currentRequests":11,"maxRequests":10,"periodInSeconds":15,"limitType":` + lt + `,"debugMessage":` + dm + `}`
		return &http.Response{StatusCode: 429, Status: "429 Too Many Requests", Header: http.Header{"Retry-After": {"1"}, "Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(body)), Request: r, ProtoMajor: 1, ProtoMinor: 1}, nil
	})
}

func jsonString(s string) (string, error) { return strconv.Quote(s), nil }

// attack66ErrBase fails every attempt as http.Client does: a *url.Error quoting
// the URL (req.URL.String(): the escaped path).
func attack66ErrBase() http.RoundTripper {
	return attack66RT(func(r *http.Request) (*http.Response, error) {
		return nil, &url.Error{Op: "Get", URL: r.URL.String(), Err: errors.New("connection reset by peer")}
	})
}

// attack66Call makes one call through a Transport with base, and returns every
// text the promise covers: each Event (Err's text and Body's LimitType,
// DebugMessage, Aspect), the returned error's text (and a ThrottleError's
// Body), and the Logger's output.
func attack66Call(t *testing.T, base http.RoundTripper, method, rawURL, body string) (texts []string) {
	t.Helper()
	var mu sync.Mutex
	var logBuf bytes.Buffer
	tr := &transport.Transport{Base: base, TitleID: "1234567890", RetryWindow: -1,
		Logger: slog.New(slog.NewTextHandler(&logBuf, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Observe: func(_ context.Context, e transport.Event) {
			mu.Lock()
			defer mu.Unlock()
			texts = append(texts, attack66EventText(e))
		}}
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, rawURL, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", mock.Token(attack66XUID, "1234567890"))
	resp, err := tr.RoundTrip(req)
	if resp != nil {
		resp.Body.Close()
	}
	if err != nil {
		texts = append(texts, "error: "+err.Error())
		var te *transport.ThrottleError
		if errors.As(err, &te) && te.Body != nil {
			texts = append(texts, "error body: "+te.Body.LimitType+" | "+te.Body.DebugMessage+" | "+te.Body.Aspect)
		}
	}
	texts = append(texts, "log: "+logBuf.String())
	return texts
}

func attack66EventText(e transport.Event) string {
	s := fmt.Sprintf("event %s scope=%s", e.Kind, e.Scope)
	if e.Err != nil {
		s += " err=" + e.Err.Error()
	}
	if e.Body != nil {
		s += " body=" + e.Body.LimitType + " | " + e.Body.DebugMessage + " | " + e.Body.Aspect
	}
	return s
}

func attack66Check(t *testing.T, name string, texts []string, leaks ...string) {
	t.Helper()
	if len(texts) < 2 {
		t.Fatalf("%s: setup: no events (%v)", name, texts)
	}
	for _, s := range texts {
		for _, l := range leaks {
			if strings.Contains(strings.ToLower(s), strings.ToLower(l)) {
				t.Errorf("%s: names the user (%q): %s", name, l, s)
			}
		}
	}
}

// BREAK. Promise (transport.Event): "It names the service, never the user:
// no userhash, token or XUID (a 429's text and an error's are scrubbed of
// the users the request's path names: xuid(…), gt(…), gamertag(…))."
// A short gamertag with a space or a non-ASCII letter (as package client
// writes gt(…): escapeSegment, "gt(Jo%20Ed)"; as net/url escapes a path
// it cannot send as written: "gt%28%C3%84%C3%96%29") and a selector the
// caller wrote percent-encoded (gt%28Bob%29) reach the service in their
// wire spelling; a 429 quoting the request as the service saw it still
// names the user in Event.Body, the ThrottleError's Body and its text:
// the scrub takes a value under 8 bytes only as the decoded selector
// whole ("gt(Jo Ed)"), never in its escaped forms.
func TestAttack66ShortGamertagWireSpelling429(t *testing.T) {
	for _, tc := range []struct {
		url   string
		leaks []string
	}{
		{"https://profile.xboxlive.com/users/gt(Jo%20Ed)/profile/settings?settings=Gamertag", []string{"Jo%20Ed", "Jo Ed"}},
		{"https://profile.xboxlive.com/users/gt(%C3%84%C3%96)/profile/settings?settings=Gamertag", []string{"%C3%84%C3%96", "ÄÖ"}},
		{"https://profile.xboxlive.com/users/gt%28Bob%29/profile/settings?settings=Gamertag", []string{"gt%28Bob%29", "gt(Bob)"}},
		{"https://profile.xboxlive.com/users/%67t(Bob)/profile/settings?settings=Gamertag", []string{"%67t(Bob)", "gt(Bob)"}},
	} {
		attack66Check(t, tc.url, attack66Call(t, attack66429Base(), "GET", tc.url, ""), tc.leaks...)
	}
}

// BREAK. Promise (transport.Event): "It names the service, never the user:
// no userhash, token or XUID (an error's [text is] scrubbed of the users
// the request's path names: xuid(…), gt(…), gamertag(…))." A Base that
// fails as http.Client does (*url.Error quoting req.URL.String(), the
// escaped path) for a short gamertag with a space: Event.Err, the returned
// error and the Logger's "error" field name gt(Jo%20Ed).
func TestAttack66ShortGamertagWireSpellingErr(t *testing.T) {
	u := "https://profile.xboxlive.com/users/gt(Jo%20Ed)/profile/settings?settings=Gamertag"
	attack66Check(t, u, attack66Call(t, attack66ErrBase(), "GET", u, ""), "Jo%20Ed", "Jo Ed")
}

// BREAK. Promise (transport.Event): "It names the service, never the user:
// no userhash, token or XUID". Paths and bodies that name users other than
// by xuid(…)/gt(…)/gamertag(…): people hub's xuids(a,b) selector (GET
// /users/me/people/xuids(…)/decoration/detail), a leaderboard's ?xuid=
// skip-to-user query, a batch body's userIds. A 429 that quotes them
// leaves the XUID in Event.Body and the ThrottleError.
func TestAttack66OtherUserSpellings429(t *testing.T) {
	for _, tc := range []struct{ method, url, body string }{
		{"GET", "https://peoplehub.xboxlive.com/users/me/people/xuids(" + attack66XUID + ",2533274799999999)/decoration/detail", ""},
		{"GET", "https://leaderboards.xboxlive.com/scids/00000000-0000-0000-0000-000012345678/leaderboards/Kills?xuid=" + attack66XUID + "&maxItems=10", ""},
		{"POST", "https://profile.xboxlive.com/users/batch/profile/settings", `{"userIds":["` + attack66XUID + `"],"settings":["Gamertag"]}`},
		{"GET", "https://achievements.xboxlive.com/users/" + attack66XUID + "/achievements", ""},
	} {
		attack66Check(t, tc.method+" "+tc.url, attack66Call(t, attack66429Base(), tc.method, tc.url, tc.body), attack66XUID)
	}
}

// held: Event's promise for the spellings the scrub names: long gamertags
// with spaces or non-ASCII letters, an upper-case XUID( selector, a
// percent-encoded selector or parentheses, and gamertag(…) — the 429's
// text (quoting the wire spelling), Event.Err and the Logger hold none of
// their users.
func TestAttack66LongSpellingsScrubbed(t *testing.T) {
	for _, tc := range []struct {
		url   string
		leaks []string
	}{
		{"https://profile.xboxlive.com/users/gt(Major%20Nelson)/profile/settings", []string{"Major%20Nelson", "Major Nelson", "Major+Nelson"}},
		{"https://profile.xboxlive.com/users/gt(%C3%84%C3%96%C3%9C%C3%A4%C3%B6)/profile/settings", []string{"%C3%84%C3%96%C3%9C%C3%A4%C3%B6", "ÄÖÜäö"}},
		{"https://profile.xboxlive.com/users/XUID(" + attack66XUID + ")/profile/settings", []string{attack66XUID}},
		{"https://profile.xboxlive.com/users/xuid%28" + attack66XUID + "%29/profile/settings", []string{attack66XUID}},
		{"https://profile.xboxlive.com/users/%78uid(" + attack66XUID + ")/profile/settings", []string{attack66XUID}},
		{"https://profile.xboxlive.com/users/gamertag(LongGamerTag1)/profile/settings", []string{"LongGamerTag1"}},
	} {
		attack66Check(t, "429 "+tc.url, attack66Call(t, attack66429Base(), "GET", tc.url, ""), tc.leaks...)
		attack66Check(t, "err "+tc.url, attack66Call(t, attack66ErrBase(), "GET", tc.url, ""), tc.leaks...)
	}
}

// held: the scrub hides the user only: the scope, the status and the
// cause's words stay ("throttled by the service", "profile", "connection
// reset by peer", the limit's numbers).
func TestAttack66ScrubKeepsServiceWords(t *testing.T) {
	u := "https://profile.xboxlive.com/users/xuid(" + attack66XUID + ")/profile/settings"
	texts := attack66Call(t, attack66429Base(), "GET", u, "")
	all := strings.Join(texts, "\n")
	for _, w := range []string{"scope=profile", "throttled by the service", "11 of 10 per 15 s", "Rate /users/"} {
		if !strings.Contains(all, w) {
			t.Errorf("429: %q lost: %s", w, all)
		}
	}
	texts = attack66Call(t, attack66ErrBase(), "GET", u, "")
	all = strings.Join(texts, "\n")
	for _, w := range []string{"connection reset by peer", "scope=profile", "profile.xboxlive.com"} {
		if !strings.Contains(all, w) {
			t.Errorf("error: %q lost: %s", w, all)
		}
	}
}

// attack66ScrubErr makes one call whose path names n distinct short users
// and whose Base fails quoting the URL.
func attack66ScrubErr(t *testing.T, n int) {
	var p strings.Builder
	p.WriteString("https://profile.xboxlive.com/users/xuid(" + attack66XUID + ")/profile/settings/")
	for i := range n {
		fmt.Fprintf(&p, "gt(%07d)", i)
	}
	tr := &transport.Transport{Base: attack66ErrBase(), TitleID: "1234567890", RetryWindow: -1, DisableBudget: true,
		Observe: func(context.Context, transport.Event) {}}
	req, err := http.NewRequest("GET", p.String(), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", mock.Token(attack66XUID, "1234567890"))
	_, err = tr.RoundTrip(req)
	if err == nil {
		t.Fatal("setup: no error")
	}
	msg := err.Error()
	if len(msg) > 120 {
		msg = msg[:60] + " … " + msg[len(msg)-60:]
	}
	if n <= 100 {
		t.Logf("n=%d (URL %d bytes): %s", n, len(p.String()), msg)
	}
}

// BREAK. The scrub should take time linear in what it reads
// (xblauth.URLSecrets: "in time linear in the URL"; the brief asks it of
// pathUsers too). A path naming n short users by gt(…) (each appended
// whole as a secret of its own) and a Base error quoting the URL: each of
// the n secrets rescans and rebuilds the whole text, n × |URL|. Measured
// at two sizes (best of two runs each): 6x the path takes well over 20x (quadratic: 36x) the
// time (about 36x: quadratic); at 8,000 users (an 88 KB URL) one call
// took 5.0 s, which looks like its 5 s attempt timeout.
func TestAttack66PathUsersScrubScales(t *testing.T) {
	racebuild.Skip(t, "a test of times")
	attack66ScrubErr(t, 100) // shows the error
	g := scaletest.Measure(2, func() { attack66ScrubErr(t, 1000) }, func() { attack66ScrubErr(t, 6000) })
	t.Logf("1,000 users, then 6,000: %v", g)
	if g.Ratio() > 20 && g.Large() > 200*time.Millisecond {
		t.Errorf("scrub superlinear for 6x the path: %v", g)
	}
}
