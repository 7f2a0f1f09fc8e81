package tunnel

import (
	"bufio"
	"errors"
	"io"
	"net"
	"testing"
)

// TestListenerEndsWithClose: a pushed conn reaches Accept; after Close,
// Accept says net.ErrClosed and Push refuses (so the caller closes the
// conn), however often Close is called.
func TestListenerEndsWithClose(t *testing.T) {
	l := NewListener(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 443})
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	go l.Push(a)
	if got, err := l.Accept(); err != nil || got != a {
		t.Fatalf("Accept: %v %v, want the pushed conn", got, err)
	}
	l.Close()
	l.Close()
	if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Accept after Close: %v, want net.ErrClosed", err)
	}
	if l.Push(b) {
		t.Error("Push after Close took the conn")
	}
	if got := l.Addr().String(); got != "127.0.0.1:443" {
		t.Errorf("Addr: %s", got)
	}
}

// TestBufferedReadsAheadFirst: what the handler's reader read ahead comes
// before the rest of the conn; with nothing read ahead the conn is itself.
func TestBufferedReadsAheadFirst(t *testing.T) {
	a, b := net.Pipe()
	defer b.Close()
	go func() { io.WriteString(b, "hello, world"); b.Close() }()
	r := bufio.NewReaderSize(a, 16)
	if _, err := r.Peek(5); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(Buffered(a, r))
	if err != nil || string(got) != "hello, world" {
		t.Errorf("read %q, %v; want the read-ahead bytes first", got, err)
	}
	c, d := net.Pipe()
	defer c.Close()
	defer d.Close()
	if Buffered(c, bufio.NewReader(c)) != c || Buffered(c, nil) != c {
		t.Error("a reader holding nothing should give back the conn itself")
	}
}
