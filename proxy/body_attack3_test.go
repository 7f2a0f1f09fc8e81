package proxy

import (
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock"
)

// TestAttack3AnnouncedBodyNeverSentOnRefusedRequests: a request that announces
// a small body and never sends it, which the proxy answers itself without
// forwarding (a bad policy header, a request for another host inside a
// tunnel, the admin API, a request in origin form), still gets its answer,
// or its connection closed, within MaxCallTime (and the second the answer
// may take). Go's server reads a small unread body before writing the
// answer's header, with no deadline, so the answer waits for the body for
// ever: the connection and its goroutine are held until the peer leaves.
// Promise: proxy.go Config.MaxCallTime ("bounds a call from its arrival to
// the end of its answer, waits included, whatever the application's own
// timeout: its body's reads end then"); RELIABILITY.md "The proxy", row "a
// body announced and never sent ... ended at MaxCallTime", and policy.go
// PolicyError ("the proxy answers it 400"); package doc ("a request whose
// Host is another, is refused (... 421)").
func TestAttack3AnnouncedBodyNeverSentOnRefusedRequests(t *testing.T) {
	attack3AnnouncedBodyNeverSent(t, nil)
}

// held: with the connection bounds xblcall proxy uses
// (mock.ConnLimits.Apply, its body timeout here 200 ms), the same requests
// are answered, or their connections closed, once the body timeout passes.
// Promise: RELIABILITY.md "The mock over HTTPS and as a proxy" ("a request
// body that stops sending ends its connection after BodyTimeout").
func TestAttack3AnnouncedBodyNeverSentWithConnLimits(t *testing.T) {
	attack3AnnouncedBodyNeverSent(t, mock.ConnLimits{BodyTimeout: 200 * time.Millisecond}.Apply)
}

func attack3AnnouncedBodyNeverSent(t *testing.T, conf func(*http.Server)) {
	const maxCall = 100 * time.Millisecond
	f := serve(t, func(c *Config) { c.MaxCallTime = maxCall; c.ConfigureServer = conf })
	tok := mock.Token(xuid1, title)
	const head = "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"a\":"
	for _, tc := range []struct {
		name, text string
		tunnel     bool
	}{
		{"bad policy header in a tunnel", "POST /users/batch/profile/settings HTTP/1.1\r\nHost: profile.xboxlive.com\r\nAuthorization: " + tok +
			"\r\nFgrl-Max-Wait: forever\r\n" + head, true},
		{"another host in a tunnel (421)", "POST /users/batch/profile/settings HTTP/1.1\r\nHost: www.example.com\r\nAuthorization: " + tok +
			"\r\n" + head, true},
		{"bad policy header, absolute form", "POST https://profile.xboxlive.com/users/batch/profile/settings HTTP/1.1\r\nHost: profile.xboxlive.com\r\n" +
			"Authorization: " + tok + "\r\nFgrl-Max-Wait: forever\r\n" + head, false},
		{"absolute form to a host not Xbox (403)", "POST https://www.example.com/x HTTP/1.1\r\nHost: www.example.com\r\n" + head, false},
		{"admin API", "GET /_fgrl/api/status HTTP/1.1\r\nHost: 127.0.0.1\r\n" + head, false},
		{"origin form (400)", "POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\n" + head, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var w io.Writer
			var read func(time.Duration) (int, bool, bool)
			if tc.tunnel {
				tcn, _ := pxAtkTunnel(t, f, "profile.xboxlive.com")
				defer tcn.Close()
				w = tcn
				read = func(d time.Duration) (int, bool, bool) { return readAnswerWithin(tcn, d) }
			} else {
				c := dial(t, f.addr)
				w = c
				read = func(d time.Duration) (int, bool, bool) { return readAnswerWithin(c, d) }
			}
			start := time.Now()
			io.WriteString(w, tc.text)
			status, closed, timedOut := read(maxCall + answerGrace + 500*time.Millisecond)
			if timedOut {
				t.Errorf("no answer and the connection open %v after the request (MaxCallTime %v): its unsent body holds it",
					time.Since(start).Round(time.Millisecond), maxCall)
			}
			t.Logf("status %d closed %v after %v", status, closed, time.Since(start).Round(time.Millisecond))
		})
	}
}
