package mock

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

// TestAttackDrippedSignInBodyEnds: a sign-in call whose body comes one byte
// at a time, each just inside BodyTimeout, is never cut: each byte
// restarts the body's time, so a 64 KiB sign-in body at one byte per
// 9 s (the default 10 s) holds a connection and a handler for a week, and
// MaxConns (1,024) such connections, a few bytes a second in all, take
// the mock's every connection. A call must end: the body as a whole
// should have a bound (here, 15 BodyTimeouts for 40 bytes dripped).
func TestAttackDrippedSignInBodyEnds(t *testing.T) {
	s := NewUnstartedServer(NewHandler())
	s.Conns.BodyTimeout = 200 * time.Millisecond
	s.Start()
	defer s.Close()
	c, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const n = 64 << 10
	fmt.Fprintf(c, "POST /authenticate HTTP/1.1\r\nHost: sisu.xboxlive.com\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", n)
	start := time.Now()
	closed := make(chan time.Duration, 1)
	go func() {
		b := make([]byte, 512)
		for {
			if _, err := c.Read(b); err != nil {
				closed <- time.Since(start)
				return
			}
		}
	}()
	limit := 15 * s.Conns.BodyTimeout
	tick := time.NewTicker(s.Conns.BodyTimeout * 3 / 4)
	defer tick.Stop()
	for sent := 0; sent < 40; sent++ {
		select {
		case d := <-closed:
			t.Logf("cut after %v, %d bytes dripped", d, sent)
			return
		case <-tick.C:
			if time.Since(start) > limit {
				t.Fatalf("a sign-in body dripped a byte every %v still read after %v (%d bytes of %d): the call never ends", s.Conns.BodyTimeout*3/4, time.Since(start).Round(time.Millisecond), sent, n)
			}
			if _, err := c.Write([]byte(" ")); err != nil {
				t.Logf("cut after %v (write: %v)", time.Since(start), err)
				return
			}
		}
	}
	select {
	case d := <-closed:
		t.Logf("cut after %v", d)
	case <-time.After(time.Second):
		t.Errorf("a sign-in body dripped a byte every %v still read after %v: the call never ends", s.Conns.BodyTimeout*3/4, time.Since(start).Round(time.Millisecond))
	}
}
