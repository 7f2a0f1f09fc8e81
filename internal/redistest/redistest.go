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

// Kill stops the server at once, as a crash would.
func (s *Server) Kill() {
	if s.cmd != nil && s.cmd.Process != nil {
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
