package main

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/tunnel"
	"github.com/xblgo/fgrl/mock"
)

// attack68SyncBuf is a log the handler writes from its own goroutines.
type attack68SyncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *attack68SyncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *attack68SyncBuf) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// held: README "As an HTTPS proxy": "the plain port accepts CONNECT for the
// hosts served and ends TLS there with the same CA. Any other host gets
// 403 naming it, and a log line; the mock never opens a connection to the
// network." CONNECT to an address (loopback, the metadata address, IPv6),
// to a served host at another port (or a port with junk after it), to a
// name that only starts like a served host, or with the request-target
// and Host disagreeing, gets 403 and a log line, its tunnel never reaches
// the TLS server's listener, and the refusal carries the name escaped
// (a target net/http cannot read, "host:443:22" or one with "%3C", is
// answered 400 by net/http before the handler, and opens nothing either);
// CONNECT profile.xboxlive.com:443 is taken over and pushed.
func TestAttack68ConnectOnlyServedHosts(t *testing.T) {
	h := mock.NewHandler()
	var log attack68SyncBuf
	proxied := tunnel.NewListener(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	defer proxied.Close()
	pushed := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := proxied.Accept()
			if err != nil {
				return
			}
			pushed <- c
		}
	}()
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "next", http.StatusTeapot) })
	srv := httptest.NewServer(connectProxy(h, next, proxied, &log))
	defer srv.Close()
	connect := func(target, host string) (int, string) {
		c, err := net.DialTimeout("tcp", srv.Listener.Addr().String(), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, host)
		resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: "CONNECT"})
		if err != nil {
			return 0, err.Error()
		}
		var b bytes.Buffer
		if resp.StatusCode != 200 {
			b.ReadFrom(resp.Body)
		}
		resp.Body.Close()
		return resp.StatusCode, b.String()
	}
	refused := 0
	for _, c := range []struct{ target, host string }{
		{"127.0.0.1:443", "127.0.0.1:443"},
		{"169.254.169.254:443", "169.254.169.254:443"},
		{"[::1]:443", "[::1]:443"},
		{"profile.xboxlive.com:22", "profile.xboxlive.com:22"},
		{"profile.xboxlive.com:443", "evil.example:443"}, // the request-target names the tunnel's host
		{"evil.example:443", "profile.xboxlive.com:443"},
		{"profile.xboxlive.com.evil.example:443", "x"},
		{"profile.xboxlive.com:0443", "x"},
		{"profile.xboxlive.com:443:22", "x"},
		{"evil%3Cscript%3E.example:443", "x"},
	} {
		code, body := connect(c.target, c.host)
		if c.target == "profile.xboxlive.com:443" {
			if code != 200 {
				t.Errorf("CONNECT %s (Host %s): %d %q, want 200", c.target, c.host, code, body)
			} else {
				select {
				case conn := <-pushed:
					conn.Close()
				case <-time.After(5 * time.Second):
					t.Errorf("CONNECT %s: not pushed", c.target)
				}
			}
			continue
		}
		if code == 200 {
			t.Errorf("CONNECT %s (Host %s): 200, a tunnel opened to a host the mock does not serve", c.target, c.host)
			select {
			case conn := <-pushed:
				conn.Close()
			case <-time.After(time.Second):
			}
			continue
		}
		if code == http.StatusForbidden {
			refused++
		}
		if code != http.StatusForbidden && code != http.StatusBadRequest { // 400: net/http's own, before the handler
			t.Errorf("CONNECT %s (Host %s): %d %q, want 403", c.target, c.host, code, body)
		}
		if strings.ContainsAny(body, "<>") {
			t.Errorf("CONNECT %s: the refusal carries markup raw: %q", c.target, body)
		}
	}
	select {
	case conn := <-pushed:
		conn.Close()
		t.Error("a refused CONNECT reached the TLS server's listener")
	default:
	}
	if n := strings.Count(log.String(), "CONNECT refused"); n != refused {
		t.Errorf("%d refusals logged, want one for each of the %d 403s:\n%s", n, refused, log.String())
	}
}
