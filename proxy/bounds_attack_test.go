package proxy

import (
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

// TestAttackChunkedTrailerBounded: RELIABILITY.md's row "a request header past
// 64 KiB, on the port or in a tunnel | 431 ... nothing sent", and the
// proxy's "every buffer bounded": a request's trailer is a header section
// too. A chunked POST in a decrypted tunnel whose trailer is one 8 MiB
// line must not be read whole and served. Held: the proxy answers 400 (the
// body did not arrive whole); what came before the trailer was streamed,
// as a streamed body is.
func TestAttackChunkedTrailerBounded(t *testing.T) {
	var reached atomic.Int64
	svc := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		reached.Add(1)
		w.WriteHeader(200)
	})
	f := serve(t, withBase(upstream(t, svc)))
	tc, br := pxAtkTunnel(t, f, "profile.xboxlive.com")
	const size = 8 << 20
	go func() {
		io.WriteString(tc, "POST /users/me/profile/settings HTTP/1.1\r\nHost: profile.xboxlive.com\r\n"+
			"Transfer-Encoding: chunked\r\nx-xbl-contract-version: 3\r\n\r\n"+"5\r\nhello\r\n0\r\nX-Pad: ")
		chunk := strings.Repeat("a", 64<<10)
		for i := 0; i < size/len(chunk); i++ {
			if _, err := io.WriteString(tc, chunk); err != nil {
				return
			}
		}
		io.WriteString(tc, "\r\n\r\n")
	}()
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Logf("the proxy closed the tunnel: %v", err)
		return
	}
	io.ReadAll(resp.Body)
	t.Logf("answer: %s, service reached %d times", resp.Status, reached.Load())
	if resp.StatusCode < 400 {
		t.Errorf("a request whose trailer is %d bytes: %s, the service reached %d times; want it refused (431 or 400), nothing sent",
			size, resp.Status, reached.Load())
	}
}
