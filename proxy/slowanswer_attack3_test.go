package proxy

import (
	"bufio"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock"
)

// held: the service sends its answer's header and a first part of the body,
// then nothing (or a byte now and then) for ever: the proxy ends the call
// at MaxCallTime, the answer's copy and the connection with it, in the
// tunnel as in absolute form.
// Promise: proxy.go Config.MaxCallTime ("bounds a call from its arrival to
// the end of its answer, waits included").
func TestAttack3EndlessAnswerEndsAtMaxCallTime(t *testing.T) {
	const maxCall = 300 * time.Millisecond
	quit := make(chan struct{})
	base := upstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(200)
		io.WriteString(w, "[")
		w.(http.Flusher).Flush()
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-quit: // never on its own: the service's answer has no end
				return
			case <-tick.C:
				if r.URL.Query().Get("trickle") != "" {
					if _, err := io.WriteString(w, " "); err != nil {
						<-quit
						return
					}
					w.(http.Flusher).Flush()
				}
			}
		}
	}))
	t.Cleanup(func() { close(quit) })
	f := serve(t, func(c *Config) { withBase(base)(c); c.MaxCallTime = maxCall })
	auth := mock.Token(xuid1, title)
	for _, q := range []string{"settings=Gamertag", "settings=Gamertag&trickle=1"} {
		for _, inTunnel := range []bool{true, false} {
			start := time.Now()
			var br *bufio.Reader
			var w io.Writer
			var closeIt func()
			if inTunnel {
				tc, r := pxAtkTunnel(t, f, "profile.xboxlive.com")
				br, w, closeIt = r, tc, func() { tc.Close() }
				io.WriteString(w, "GET /users/me/profile/settings?"+q+" HTTP/1.1\r\nHost: profile.xboxlive.com\r\nAuthorization: "+auth+"\r\nx-xbl-contract-version: 3\r\n\r\n")
			} else {
				c := dial(t, f.addr)
				br, w, closeIt = bufio.NewReader(c), c, func() { c.Close() }
				io.WriteString(w, "GET https://profile.xboxlive.com/users/me/profile/settings?"+q+" HTTP/1.1\r\nHost: profile.xboxlive.com\r\nAuthorization: "+auth+"\r\nx-xbl-contract-version: 3\r\n\r\n")
			}
			done := make(chan error, 1)
			go func() {
				resp, err := http.ReadResponse(br, nil)
				if err == nil {
					var b []byte
					b, err = io.ReadAll(resp.Body)
					t.Logf("answer %d %v cl=%d te=%v body %q", resp.StatusCode, resp.Header, resp.ContentLength, resp.TransferEncoding, b)
				}
				done <- err
			}()
			ended := false
			select {
			case err := <-done:
				ended = true
				t.Logf("%s tunnel=%v: ended after %v: %v", q, inTunnel, time.Since(start).Round(time.Millisecond), err)
				if err == nil {
					t.Errorf("%s tunnel=%v: the answer cut at MaxCallTime ended as if whole (a 200 and its body's end): the cut is not seen", q, inTunnel)
				}
			case <-time.After(maxCall + answerGrace + time.Second):
				t.Errorf("%s tunnel=%v: the answer still open %v after the call began (MaxCallTime %v)", q, inTunnel,
					time.Since(start).Round(time.Millisecond), maxCall)
			}
			closeIt()
			if !ended {
				<-done
			}
		}
	}
}
