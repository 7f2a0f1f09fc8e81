package redisstore

import (
	"bufio"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// attack64Fake is a loopback RESP server for these attacks: reply decides, per
// command (name upper-cased), the raw bytes to write, and whether to close
// the connection after them. An empty reply and no close: no answer.
type attack64Fake struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
}

func startAtkFake(t *testing.T, reply func(cmd []string) (out string, hangup bool)) *attack64Fake {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &attack64Fake{ln: ln}
	f.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			f.mu.Lock()
			f.conns = append(f.conns, c)
			f.mu.Unlock()
			f.wg.Go(func() { attack64Serve(c, reply) })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		f.mu.Lock()
		for _, c := range f.conns {
			c.Close()
		}
		f.mu.Unlock()
		f.wg.Wait()
	})
	return f
}

func (f *attack64Fake) addr() string { return f.ln.Addr().String() }

func attack64Serve(c net.Conn, reply func(cmd []string) (string, bool)) {
	defer c.Close()
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		if !strings.HasPrefix(line, "*") {
			continue
		}
		n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
		cmd := make([]string, 0, n)
		for i := 0; i < n; i++ {
			hdr, err := r.ReadString('\n')
			if err != nil {
				return
			}
			size, _ := strconv.Atoi(strings.TrimSpace(hdr[1:]))
			b := make([]byte, size+2)
			if _, err := io.ReadFull(r, b); err != nil {
				return
			}
			cmd = append(cmd, string(b[:size]))
		}
		if len(cmd) > 0 {
			cmd[0] = strings.ToUpper(cmd[0])
		}
		out, hangup := reply(cmd)
		if out != "" {
			if _, err := c.Write([]byte(out)); err != nil {
				return
			}
		}
		if hangup {
			return
		}
	}
}

// attack64Handshake answers the commands go-redis sends on a new connection;
// ok is false for any other command.
func attack64Handshake(cmd []string) (string, bool) {
	switch cmd[0] {
	case "HELLO":
		return "-ERR unknown command 'HELLO'\r\n", true
	case "CLIENT", "SELECT", "AUTH":
		return "+OK\r\n", true
	case "PING":
		return "+PONG\r\n", true
	}
	return "", false
}
