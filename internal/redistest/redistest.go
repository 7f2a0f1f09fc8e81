// Package redistest starts a private redis-server for a test, on a free
// loopback port, and stops it when the test ends. Tests that need Redis are
// skipped, with a one-line reason, where redis-server is not on PATH (and
// fail instead when FGRL_REQUIRE_REDIS is set, as in CI).
package redistest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Server is a running redis-server.
type Server struct {
	Addr string

	args []string // extra redis-server arguments
	tb   testing.TB
	cmd  *exec.Cmd
	port int
}

// Start starts a redis-server for tb, with extra redis-server arguments, and
// registers its shutdown.
func Start(tb testing.TB, args ...string) *Server {
	tb.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("FGRL_REQUIRE_REDIS") != "" {
			tb.Fatal("redis-server not on PATH and FGRL_REQUIRE_REDIS is set")
		}
		tb.Skip("redis-server not on PATH; install it to run the Redis tests")
	}
	s := &Server{tb: tb, port: freePort(tb), args: args}

	s.Addr = "127.0.0.1:" + strconv.Itoa(s.port)
	s.start()
	tb.Cleanup(s.Kill)
	return s
}

func freePort(tb testing.TB) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// start runs redis-server and waits until it accepts connections.
func (s *Server) start() {
	s.tb.Helper()
	args := append([]string{"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--protected-mode", "yes", "--enable-debug-command", "local"}, s.args...)
	s.cmd = exec.Command("redis-server", args...)
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		s.tb.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		s.tb.Fatal(err)
	}
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "Ready to accept connections") {
				ready <- nil
				io.Copy(io.Discard, out)
				return
			}
		}
		ready <- fmt.Errorf("redis-server exited before it was ready: %v", sc.Err())
	}()
	select {
	case err := <-ready:
		if err != nil {
			s.tb.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		s.tb.Fatal("redis-server did not start in 10 s")
	}
}

// Client returns a client for the server, closed when the test ends.
func (s *Server) Client() *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.Addr, DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second})
	s.tb.Cleanup(func() { c.Close() })
	return c
}

// Kill stops the server at once, as a crash would (a paused one too).
func (s *Server) Kill() {
	if s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Signal(syscall.SIGCONT)
		s.cmd.Process.Kill()
		s.cmd.Wait()
		s.cmd = nil
	}
}

// Restart starts the server again on the same port, empty.
func (s *Server) Restart() {
	s.tb.Helper()
	s.Kill()
	s.start()
}

// Pause stops the server's process (SIGSTOP): it keeps its connections and
// accepts new ones, and answers nothing until Resume, as a paused or
// swapped-out Redis does.
func (s *Server) Pause() { s.cmd.Process.Signal(syscall.SIGSTOP) }

// Resume continues a paused server (SIGCONT).
func (s *Server) Resume() { s.cmd.Process.Signal(syscall.SIGCONT) }

// Silent listens on loopback and accepts connections, reading what they
// send and never answering: a Redis that is up and says nothing (a network
// that drops its replies). It returns the address; the listener and its
// connections close when the test ends.
func Silent(tb testing.TB) string {
	tb.Helper()
	return proxy(tb, func(c net.Conn) {
		io.Copy(io.Discard, c)
	})
}

// Slowed forwards loopback connections to backend and holds each chunk the
// backend sends back for delay, which may change while it runs: a Redis
// that answers, late. It returns the address to dial; everything closes
// when the test ends.
func Slowed(tb testing.TB, backend string, delay *atomic.Int64) string {
	tb.Helper()
	return proxy(tb, func(c net.Conn) {
		b, err := net.Dial("tcp", backend)
		if err != nil {
			return
		}
		defer b.Close()
		go func() { io.Copy(b, c); b.Close() }()
		buf := make([]byte, 64<<10)
		for {
			n, err := b.Read(buf)
			if n > 0 {
				time.Sleep(time.Duration(delay.Load()))
				if _, werr := c.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	})
}

// proxy listens on loopback and runs serve on each connection accepted,
// closing it after; the listener and every connection close, and every
// serve has returned, when the test ends.
func proxy(tb testing.TB, serve func(net.Conn)) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
		wg    sync.WaitGroup
	)
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Go(func() { defer c.Close(); serve(c) })
		}
	})
	tb.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}
