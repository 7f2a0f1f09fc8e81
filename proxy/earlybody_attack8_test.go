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

// The promises: forward.go, watchedBody: "Once the call has its answer, the
// transport goes on reading the body [...] but a read that fails then ends
// the body instead [...] Either way the transport's connection stays whole
// while it delivers the answer"; proxy.go, Config.MaxCallTime: "A call
// that ends before its streamed body does (refused, or answered without
// the service reading it all) is answered once the rest has come, within
// 200 ms"; RELIABILITY.md, "The proxy cut an answer the service gave before
// reading the body": "The answer comes whole and the connection is kept".

// attack8Body is a request body of n bytes (a JSON array of ones), framed by a
// declared length or chunked in one chunk.
func attack8Body(n int, chunked bool) string {
	items := strings.Repeat("1,", (n-2)/2)
	b := "[" + items + "1]"
	if len(b) < n {
		b = " " + b
	}
	if chunked {
		return fmt.Sprintf("Transfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", len(b), b)
	}
	return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(b), b)
}

// held: a service (HTTP/1.1 or HTTP/2, keep-alive or Connection: close)
// answers a POST at once, in two parts 100 ms apart, without reading its
// streamed body of 64 KiB + 1, 256 KiB - 1, 256 KiB + 1 or 1 MB (declared
// or chunked), sent whole; twice on one connection (absolute form), and in
// a CONNECT tunnel. Each answer comes whole within a second (MaxCallTime
// is 3 s); a body net/http drained (under 256 KiB) keeps the connection.
func TestAttack8EarlyAnswerBodySizesWhole(t *testing.T) {
	first := `{"profileUsers":[` + strings.Repeat(`{"id":"2533274791234567","settings":[]},`, 60)
	rest := strings.Repeat(`{"id":"2533274791234567","settings":[]},`, 60) + `{}]}`
	type tc struct {
		size     int
		chunked  bool
		h2, keep bool
		inTunnel bool
	}
	var cases []tc
	for _, size := range []int{64<<10 + 1, 256<<10 - 1, 256<<10 + 1, 1 << 20} {
		for _, chunked := range []bool{false, true} {
			for _, h2 := range []bool{false, true} {
				cases = append(cases, tc{size, chunked, h2, true, false})
			}
		}
	}
	cases = append(cases,
		tc{256<<10 - 1, false, false, false, false},
		tc{256<<10 - 1, false, true, true, true},
		tc{1 << 20, true, false, true, true},
	)
	for _, c := range cases {
		t.Run(fmt.Sprintf("size=%d/chunked=%v/h2=%v/keepalive=%v/tunnel=%v", c.size, c.chunked, c.h2, c.keep, c.inTunnel), func(t *testing.T) {
			f := serve(t, func(cf *Config) {
				base, _, _ := earlyService(t, first, rest, c.h2, c.keep, true)
				withBase(base)(cf)
				cf.MaxCallTime = 3 * time.Second
			})
			conn, br, pre := callConn(t, f, c.inTunnel)
			req := "POST " + pre + "/users/batch/profile/settings HTTP/1.1\r\nHost: profile.xboxlive.com\r\nAuthorization: " + mock.Token(xuid1, title) +
				"\r\nx-xbl-contract-version: 2\r\nContent-Type: application/json\r\n" + attack8Body(c.size, c.chunked)
			for i := range 2 {
				start := time.Now()
				resp, body, err := attack6Send(t, conn, br, req)
				took := time.Since(start)
				if err != nil {
					t.Fatalf("call %d: %v after %v", i, err, took)
				}
				t.Logf("call %d: %d after %v, close=%v", i, resp.StatusCode, took.Round(time.Millisecond), resp.Close)
				if body != first+rest || took > time.Second {
					t.Fatalf("call %d: %d bytes of %d after %v; want the whole answer within 1 s", i, len(body), len(first+rest), took)
				}
				if resp.Close {
					if c.size < 256<<10 && c.keep {
						t.Errorf("call %d: a body sent whole under 256 KiB closed the connection", i)
					}
					break
				}
			}
		})
	}
}

// held: a call refused locally (its user's budget spent) whose streamed
// body (128 KiB, chunked or of a declared length) is sent whole is answered
// 429 at once, and its connection serves the next request (in absolute
// form and in a tunnel).
func TestAttack8LocalRefusalStreamedBodyKeepsConnection(t *testing.T) {
	for _, inTunnel := range []bool{false, true} {
		for _, chunked := range []bool{false, true} {
			t.Run(fmt.Sprintf("tunnel=%v/chunked=%v", inTunnel, chunked), func(t *testing.T) {
				f := serve(t, nil)
				spendBudget(t, f, xuid1)
				conn, br, pre := callConn(t, f, inTunnel)
				req := "POST " + pre + "/users/batch/profile/settings HTTP/1.1\r\nHost: profile.xboxlive.com\r\nAuthorization: " + mock.Token(xuid1, title) +
					"\r\nx-xbl-contract-version: 2\r\n" + HeaderFailFast + ": true\r\nContent-Type: application/json\r\n" + attack8Body(128<<10, chunked)
				for i := range 2 {
					start := time.Now()
					resp, _, err := attack6Send(t, conn, br, req)
					if err != nil {
						t.Fatalf("call %d: %v", i, err)
					}
					took := time.Since(start)
					if resp.StatusCode != 429 || resp.Header.Get(HeaderRefused) != "local" || took > time.Second {
						t.Fatalf("call %d: %d %s=%q after %v; want a local 429 at once", i, resp.StatusCode, HeaderRefused, resp.Header.Get(HeaderRefused), took)
					}
					if resp.Close {
						t.Fatalf("call %d: the connection closed after a local refusal of a body sent whole", i)
					}
				}
			})
		}
	}
}

// held: the service never receives a body that looks complete when the
// application's was cut off before the answer: the application sends half
// of a declared 200 KB body, or a chunk of which half comes, and closes its
// side; an HTTP/1.1 and an HTTP/2 service reading the whole body before
// answering sees its read fail, not end.
//
// Promise: forward.go, watchedBody: "a streamed request body that
// remembers whether reading it failed (a chunked body malformed or cut
// off), so that the call's failure is answered as the application's";
// after the answer only, "a read that fails then ends the body".
func TestAttack8CutBodyBeforeAnswerNeverWhole(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		for _, chunked := range []bool{false, true} {
			t.Run(fmt.Sprintf("h2=%v/chunked=%v", h2, chunked), func(t *testing.T) {
				read := make(chan string, 4)
				svc := upstreamProto(t, h2, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					b, err := io.ReadAll(r.Body)
					read <- fmt.Sprintf("%d bytes, err=%v", len(b), err)
					w.WriteHeader(200)
				}))
				f := serve(t, func(cf *Config) { withBase(svc)(cf); cf.MaxCallTime = 3 * time.Second })
				conn, _, pre := callConn(t, f, false)
				const n = 200 << 10
				half := strings.Repeat("1", n/2)
				head := "POST " + pre + "/users/batch/profile/settings HTTP/1.1\r\nHost: profile.xboxlive.com\r\nAuthorization: " + mock.Token(xuid1, title) +
					"\r\nx-xbl-contract-version: 2\r\nContent-Type: application/json\r\n"
				if chunked {
					head += fmt.Sprintf("Transfer-Encoding: chunked\r\n\r\n%x\r\n", n) + half
				} else {
					head += fmt.Sprintf("Content-Length: %d\r\n\r\n", n) + half
				}
				conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
				io.WriteString(conn, head)
				time.Sleep(100 * time.Millisecond)
				if cw, ok := conn.(interface{ CloseWrite() error }); ok {
					cw.CloseWrite()
				} else {
					conn.Close()
				}
				select {
				case s := <-read:
					t.Logf("the service read %s", s)
					if strings.HasSuffix(s, "err=<nil>") {
						t.Errorf("the service read a cut body as whole: %s", s)
					}
				case <-time.After(5 * time.Second):
					t.Log("the service never finished reading (the call was dropped)")
				}
			})
		}
	}
}
