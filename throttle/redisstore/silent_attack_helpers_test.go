package redisstore

import (
	"io"
	"net"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// atkDelayProxy forwards loopback TCP to backend, holding each chunk the
// backend answers for delay (a Redis slowed but answering). delay may be
// changed while it runs.
type atkDelayProxy struct {
	ln    net.Listener
	delay atomic.Int64
	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
}

func atkStartDelayProxy(t *testing.T, backend string, delay time.Duration) *atkDelayProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &atkDelayProxy{ln: ln}
	p.delay.Store(int64(delay))
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			b, err := net.Dial("tcp", backend)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, b)
			p.mu.Unlock()
			p.wg.Go(func() { io.Copy(b, c); b.Close() })
			p.wg.Go(func() {
				buf := make([]byte, 64<<10)
				for {
					n, err := b.Read(buf)
					if n > 0 {
						time.Sleep(time.Duration(p.delay.Load()))
						if _, werr := c.Write(buf[:n]); werr != nil {
							break
						}
					}
					if err != nil {
						break
					}
				}
				c.Close()
			})
		}
	})
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		for _, c := range p.conns {
			c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p
}

func (p *atkDelayProxy) addr() string { return p.ln.Addr().String() }

// atkRedisProc is a redis-server process of the test's own, on loopback,
// that the test may stop (SIGSTOP) and continue (SIGCONT).
type atkRedisProc struct {
	addr string
	cmd  *exec.Cmd
}

func atkStartRedisProc(t *testing.T) *atkRedisProc {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not on PATH")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command("redis-server", "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &atkRedisProc{addr: "127.0.0.1:" + strconv.Itoa(port), cmd: cmd}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGCONT)
		cmd.Process.Kill()
		cmd.Wait()
	})
	for i := 0; ; i++ {
		c, err := net.Dial("tcp", p.addr)
		if err == nil {
			c.Close()
			break
		}
		if i > 200 {
			t.Fatalf("redis-server did not listen: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return p
}

func (p *atkRedisProc) stop() { p.cmd.Process.Signal(syscall.SIGSTOP) }
func (p *atkRedisProc) cont() { p.cmd.Process.Signal(syscall.SIGCONT) }
