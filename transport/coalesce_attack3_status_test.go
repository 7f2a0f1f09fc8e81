package transport

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/racebuild"
)

// attack3CoalRawServer serves, on loopback, every request with a 200 whose
// status line carries a reason phrase of reason bytes (net/http's client
// accepts a response head of up to 10 MiB: Transport.MaxResponseHeaderBytes'
// default) and a 2-byte body.
func attack3CoalRawServer(t *testing.T, reason int) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	phrase := strings.Repeat("K", reason)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					io.Copy(io.Discard, req.Body)
					if _, err := fmt.Fprintf(c, "HTTP/1.1 200 %s\r\nContent-Length: 2\r\n\r\nok", phrase); err != nil {
						return
					}
				}
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// TestAttack3CoalCacheCountsStatusLine checks Transport.ReadCacheTTL
// (transport.go:159-160): "The cache holds at most 4,096 answers and 64 MiB,
// counting the memory of bodies, headers and keys" (RELIABILITY.md round
// 4: 1 MiB of headers per answer must not hold GiBs under a "64 MiB"
// cache). An answer's status line is kept too (Response.Status, the
// server's reason phrase, up to net/http's 10 MiB response head), and is
// not counted: 100 answers with a 1 MiB reason phrase are all kept, 100
// MiB held while the cache counts a few KB.
func TestAttack3CoalCacheCountsStatusLine(t *testing.T) {
	racebuild.Skip(t, "heap figures: 100 answers of 1 MiB status lines, 5 s under the detector")
	srv := attack3CoalRawServer(t, 1<<20)
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	tr := &Transport{Base: base, TitleID: "1234567890", CoalesceReads: true, ReadCacheTTL: 10 * time.Second, DisableBudget: true}
	for i := range 100 {
		req, _ := http.NewRequest("GET", fmt.Sprintf("%s/users/me?n=%d", srv, i), nil)
		if _, err := attack3CoalGet(tr, req); err != nil {
			t.Fatal(err)
		}
	}
	tr.reads.mu.Lock()
	defer tr.reads.mu.Unlock()
	held := 0
	for k, s := range tr.reads.cache {
		held += k.size() + cap(s.body) + headerBytes(s.resp.Header) + len(s.resp.Status) + len(s.resp.Proto)
	}
	if held > maxCachedBytes {
		t.Errorf("the cache holds %d answers, %d bytes (it counts %d), over its bound of %d", len(tr.reads.cache), held, tr.reads.bytes, maxCachedBytes)
	}
}
