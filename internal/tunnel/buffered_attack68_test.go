package tunnel

import (
	"bufio"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// held: Buffered "returns conn, reading first what r ... holds": what the
// reader had read ahead comes first, then the connection's own bytes; a
// read deadline set on the returned conn still ends a stalled read
// (os.ErrDeadlineExceeded) and a later read, the deadline lifted, gets
// the next bytes; CloseWrite half-closes (the peer reads EOF while this
// side still reads).
func TestAttack68BufferedDeadlinesAndHalfClose(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	peerc := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(peerc)
			return
		}
		peerc <- c
	}()
	raw, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	peer := <-peerc
	if peer == nil {
		t.Fatal("no accept")
	}
	defer peer.Close()
	peer.Write([]byte("AHEADrest"))
	br := bufio.NewReader(raw)
	if _, err := br.Peek(9); err != nil {
		t.Fatal(err)
	}
	c := Buffered(raw, br)
	got := make([]byte, 9)
	if _, err := io.ReadFull(c, got); err != nil || string(got) != "AHEADrest" {
		t.Fatalf("read %q %v", got, err)
	}
	c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	start := time.Now()
	_, err = c.Read(got)
	if !errors.Is(err, os.ErrDeadlineExceeded) || time.Since(start) > 3*time.Second {
		t.Fatalf("a stalled read with a deadline: %v after %v", err, time.Since(start))
	}
	c.SetReadDeadline(time.Time{})
	peer.Write([]byte("next"))
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := io.ReadFull(c, got[:4])
	if err != nil || string(got[:n]) != "next" {
		t.Fatalf("after the deadline lifted: %q %v", got[:n], err)
	}
	cw, ok := c.(interface{ CloseWrite() error })
	if !ok {
		t.Fatalf("%T has no CloseWrite", c)
	}
	if err := cw.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	peer.SetReadDeadline(time.Now().Add(5 * time.Second))
	if b, err := io.ReadAll(peer); err != nil || len(b) != 0 {
		t.Fatalf("peer after CloseWrite: %q %v", b, err)
	}
	peer.Write([]byte("late"))
	if n, err := io.ReadFull(c, got[:4]); err != nil || string(got[:n]) != "late" {
		t.Fatalf("reading after CloseWrite: %q %v", got[:n], err)
	}
}
