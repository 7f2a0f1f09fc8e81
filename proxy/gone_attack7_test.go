package proxy

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock"
)

// attack7HeaderFirstService is a service that answers a POST at once, before
// reading its body: the header of its answer only (with its
// Content-Length, so that the ReverseProxy flushes nothing before the
// body), then nothing for hold, then body. Meanwhile it reads and discards what comes of the
// request, and notes when its connection ends (the proxy's transport gave
// the call up). answered receives once its header is out; gone receives
// when the connection ended before hold passed.
func attack7HeaderFirstService(t *testing.T, hold time.Duration, body string) (rt http.RoundTripper, answered, gone chan time.Time) {
	answered, gone = make(chan time.Time, 8), make(chan time.Time, 8)
	rt = upstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		fmt.Fprintf(rw, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n", len(body))
		rw.Flush()
		answered <- time.Now()
		ended := make(chan struct{})
		go func() {
			defer close(ended)
			io.Copy(io.Discard, rw)
		}()
		select {
		case <-ended:
			gone <- time.Now()
		case <-time.After(hold):
			io.WriteString(rw, body)
			rw.Flush()
			c.Close()
			<-ended
		}
	}))
	return rt, answered, gone
}

// TestAttack7ApplicationGoneAfterHeaderOnlyAnswerEndsCall: an application
// POSTs a streamed body (chunked): its first chunk, then, once the service
// has sent the header of its answer (and nothing more yet: it is still
// working), the rest of its body, whole, and 100 ms later it gives up and
// closes its connection. The call should end then: the proxy's transport
// gives the service's request up, and the call is logged. Since 89df587,
// once the call has its answer (the service's header), the transport's
// reads of the body wait for the call's end, so nobody reads the body's
// rest: net/http notices a closed connection only once a request's body has
// been read to its end (its background read), so the application's leaving
// goes unseen, and the call, its goroutines, its connection and the
// service's request last until the service ends its answer (here 3 s) or
// MaxCallTime passes (here 4 s; DefaultMaxCallTime is 10 minutes), and the
// call is logged as served, 200: an answer nobody received. Before 89df587
// the call ended at once (the transport read the rest, the body's end
// started net/http's background read, which saw the close).
//
// Promise: proxy.go, package doc: "A call the budget lets through waits as
// the transport waits, and ends when the application gives up (it closes
// its connection or stream: the call's context ends, and a budget slot it
// was waiting for is given back)."
func TestAttack7ApplicationGoneAfterHeaderOnlyAnswerEndsCall(t *testing.T) {
	const maxCall = 4 * time.Second
	const within = 1500 * time.Millisecond
	for _, inTunnel := range []bool{false, true} {
		for _, whole := range []bool{false, true} {
			t.Run(fmt.Sprintf("tunnel=%v/body whole=%v", inTunnel, whole), func(t *testing.T) {
				base, answered, gone := attack7HeaderFirstService(t, maxCall-time.Second, `{"profileUsers":[]}`)
				logger, logged := pxAtk2Logged()
				f := serve(t, func(c *Config) {
					withBase(base)(c)
					c.MaxCallTime = maxCall
					c.Logger = logger
				})
				conn, _, pre := callConn(t, f, inTunnel)
				items := strings.Repeat("1,", 2000)
				io.WriteString(conn, "POST "+pre+"/users/batch/profile/settings HTTP/1.1\r\nHost: profile.xboxlive.com\r\nAuthorization: "+mock.Token(xuid1, title)+
					"\r\nx-xbl-contract-version: 2\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n[\r\n")
				select {
				case <-answered:
				case <-time.After(5 * time.Second):
					t.Fatal("the service never got the call")
				}
				time.Sleep(50 * time.Millisecond) // the proxy has the service's header
				io.WriteString(conn, fmt.Sprintf("%x\r\n%s1]\r\n", len(items)+2, items))
				if whole {
					time.Sleep(20 * time.Millisecond)
					io.WriteString(conn, "0\r\n\r\n")
				}
				time.Sleep(100 * time.Millisecond)
				closed := time.Now()
				conn.Close()
				logEnded := attack7WaitLog(logged, "proxy: call", within)
				select {
				case at := <-gone:
					t.Logf("the service's request ended %v after the application left", at.Sub(closed).Round(time.Millisecond))
				case <-time.After(10 * time.Millisecond):
					t.Errorf("the application closed its connection %v ago; the call goes on: the service still holds its request, the proxy logged no end (%v) (MaxCallTime %v)",
						time.Since(closed).Round(100*time.Millisecond), logEnded, maxCall)
					select { // wait for its end, so that nothing outlives the test
					case at := <-gone:
						t.Logf("the service's request ended %v after the application left", at.Sub(closed).Round(time.Millisecond))
					case <-time.After(maxCall + time.Second):
					}
				}
				attack7WaitLog(logged, "proxy: call", 3*time.Second)
				t.Logf("log: %s", strings.TrimSpace(logged.String()))
			})
		}
	}
}

// attack7WaitLog waits up to d for the log to hold s.
func attack7WaitLog(logged interface{ String() string }, s string, d time.Duration) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if strings.Contains(logged.String(), s) {
			return true
		}
	}
	return false
}
