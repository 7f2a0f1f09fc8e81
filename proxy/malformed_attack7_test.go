package proxy

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// held: a streamed body (chunked, 70 KB whole, then framing that is not a
// chunk's) that breaks off while the service is reading it, before any
// answer, is answered 400 "the request's body did not arrive whole", in
// absolute form and in a tunnel, not 502 nor nothing; and the log holds
// no token.
//
// Promise: forward.go, failed: "the application's body broke off or is
// malformed: not the service's fault" (400 "proxy: the request's body did
// not arrive whole"); proxy.go, package doc: "no token reaches its log,
// status or errors".
func TestAttack7MalformedStreamedBodyBeforeAnswer400(t *testing.T) {
	base := upstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			return
		}
		io.WriteString(w, "{}")
	}))
	for _, inTunnel := range []bool{false, true} {
		t.Run(fmt.Sprintf("tunnel=%v", inTunnel), func(t *testing.T) {
			logger, logged := pxAtk2Logged()
			f := serve(t, func(c *Config) {
				withBase(base)(c)
				c.MaxCallTime = 3 * time.Second
				c.Logger = logger
			})
			auth, tok := pxAtk2Tokens(xuid1)
			conn, br, pre := callConn(t, f, inTunnel)
			items := strings.Repeat("1,", 35000)
			start := time.Now()
			resp, body, err := attack6Send(t, conn, br, "POST "+pre+"/users/batch/profile/settings HTTP/1.1\r\nHost: profile.xboxlive.com\r\nAuthorization: "+auth+
				"\r\nx-xbl-contract-version: 2\r\nContent-Type: application/json\r\n"+
				fmt.Sprintf("Transfer-Encoding: chunked\r\n\r\n%x\r\n[%s\r\nzz\r\n", len(items)+1, items))
			if err != nil {
				t.Fatalf("no answer: %v", err)
			}
			t.Logf("%d %q after %v", resp.StatusCode, strings.TrimSpace(body), time.Since(start).Round(time.Millisecond))
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "did not arrive whole") {
				t.Errorf("got %d %q, want 400: the body did not arrive whole", resp.StatusCode, body)
			}
			attack7WaitLog(logged, "proxy: call", 2*time.Second)
			if strings.Contains(logged.String(), tok) || strings.Contains(body, tok) {
				t.Errorf("the token reached the log or the answer")
			}
		})
	}
}
