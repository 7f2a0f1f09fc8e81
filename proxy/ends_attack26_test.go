package proxy

// Attacks by helper attack26139 (2026-12-06) on "every call ends within its
// context, and every buffer is bounded in bytes": hostile applications
// that leave, or that open many HTTP/2 streams and never read them, while
// the service trickles or never ends its answers.

import (
	"bufio"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock"
)

// attack26H2 is a bare HTTP/2 client over a decrypted tunnel: it writes frames
// and never sends a WINDOW_UPDATE, so the proxy can send it at most the
// connection's first 65,535 bytes of DATA.
type attack26H2 struct{ c net.Conn }

func (h attack26H2) frame(typ, flags byte, stream uint32, payload []byte) {
	hdr := make([]byte, 9)
	hdr[0], hdr[1], hdr[2] = byte(len(payload)>>16), byte(len(payload)>>8), byte(len(payload))
	hdr[3], hdr[4] = typ, flags
	binary.BigEndian.PutUint32(hdr[5:], stream)
	h.c.Write(append(hdr, payload...))
}

// hpackInt appends n with an n-bit prefix (the first byte's high bits first).
func hpackInt(b []byte, first byte, bits uint, n int) []byte {
	max := 1<<bits - 1
	if n < max {
		return append(b, first|byte(n))
	}
	b = append(b, first|byte(max))
	n -= max
	for n >= 128 {
		b = append(b, byte(n%128+128))
		n /= 128
	}
	return append(b, byte(n))
}

// get opens stream id with a GET of path as auth (HPACK literals without
// indexing, no Huffman), END_STREAM|END_HEADERS.
func (h attack26H2) get(id uint32, host, path, auth string) {
	hb := []byte{0x82, 0x87} // :method GET, :scheme https
	lit := func(n, v string) {
		hb = append(hb, 0x00)
		hb = hpackInt(hb, 0, 7, len(n))
		hb = append(hb, n...)
		hb = hpackInt(hb, 0, 7, len(v))
		hb = append(hb, v...)
	}
	lit(":path", path)
	lit(":authority", host)
	lit("authorization", auth)
	lit("x-xbl-contract-version", "3")
	h.frame(1, 5, id, hb)
}

// attack26Tunnel opens a decrypted tunnel to host through the proxy at addr,
// negotiating proto.
func attack26Tunnel(t *testing.T, f *fixture, host, proto string) *tls.Conn {
	t.Helper()
	resp, c := connectRaw(t, f.addr, host+":443")
	if resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %d", resp.StatusCode)
	}
	tc := tls.Client(c, &tls.Config{RootCAs: f.ca.Pool(), ServerName: host, NextProtos: []string{proto}})
	if err := tc.Handshake(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tc.Close() })
	if tc.ConnectionState().NegotiatedProtocol != proto {
		t.Skipf("no %s in the tunnel", proto)
	}
	return tc
}

// attack26Settle waits up to d for the goroutine count to come down to at most
// want, and returns the last count.
func attack26Settle(want int, d time.Duration) int {
	deadline := time.Now().Add(d)
	for {
		n := runtime.NumGoroutine()
		if n <= want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// held: 24 never-read HTTP/2 streams on one tunnel, endless answers
// TestAttack26H2ManyUnreadStreamsEnd: an application opens one HTTP/2 tunnel
// and in it 24 streams, one per user, each asking for an answer the
// service never ends, and reads none of them (no WINDOW_UPDATE: the proxy
// can send 64 KiB in all). Promise (Config.MaxCallTime): "bounds a call
// from its arrival to the end of its answer, waits included, whatever the
// application's own timeout"; RELIABILITY.md "No goroutine leaks". Every
// service request must end by MaxCallTime plus the answer's grace, with the
// application's connection still open, and the goroutines of the calls go.
func TestAttack26H2ManyUnreadStreamsEnd(t *testing.T) {
	const maxCall = time.Second
	const streams = 24
	var active, started atomic.Int64
	base := upstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started.Add(1)
		active.Add(1)
		defer active.Add(-1)
		chunk := make([]byte, 32<<10)
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	f := serve(t, func(c *Config) {
		withBase(base)(c)
		c.MaxCallTime = maxCall
	})
	before := runtime.NumGoroutine()
	tc := attack26Tunnel(t, f, "profile.xboxlive.com", "h2")
	h := attack26H2{tc}
	io.WriteString(tc, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
	h.frame(4, 0, 0, nil)
	start := time.Now()
	for i := 0; i < streams; i++ {
		x := fmt.Sprintf("25334054%08d", 1000+i)
		h.get(uint32(2*i+1), "profile.xboxlive.com", "/users/me/profile/settings", mock.Token(x, title))
	}
	// Wait until the service has them (or the proxy refused some).
	for time.Since(start) < maxCall && started.Load() < streams {
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("%d of %d calls reached the service", started.Load(), streams)
	deadline := start.Add(maxCall + answerGrace + 2*time.Second)
	for active.Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := active.Load(); n > 0 {
		t.Errorf("%d service requests still under way %v after %d never-read HTTP/2 streams began (MaxCallTime %v): "+
			"Config.MaxCallTime \"bounds a call from its arrival to the end of its answer ... whatever the application's own timeout\"",
			n, time.Since(start).Round(time.Millisecond), streams, maxCall)
	}
	// The tunnel is still open: its connection's few goroutines stay; the
	// calls' must have gone.
	if n := attack26Settle(before+12, 3*time.Second); n > before+12 {
		t.Errorf("%d goroutines with the tunnel still open after its %d calls passed MaxCallTime, %d before it: "+
			"the calls' goroutines outlive them (RELIABILITY.md \"No goroutine leaks\")", n, streams, before)
	}
	// The connection still serves: a PING is answered.
	h.frame(6, 0, 0, []byte("attack26139!!"))
	tc.SetReadDeadline(time.Now().Add(3 * time.Second))
	br := bufio.NewReader(tc)
	for {
		hdr := make([]byte, 9)
		if _, err := io.ReadFull(br, hdr); err != nil {
			t.Logf("the tunnel ended: %v (allowed)", err)
			return
		}
		n := int(hdr[0])<<16 | int(hdr[1])<<8 | int(hdr[2])
		if _, err := io.CopyN(io.Discard, br, int64(n)); err != nil {
			t.Logf("the tunnel ended: %v (allowed)", err)
			return
		}
		if hdr[3] == 6 && hdr[4]&1 == 1 {
			return
		}
	}
}

// held: an application leaving a trickled answer (absolute form, h1 tunnel, h2 RST_STREAM) ends the service's request at once
// TestAttack26ApplicationLeavesTrickledAnswer: the service sends the header of
// its answer, then a byte every 50 ms; the application reads the header and
// closes its connection (absolute form, an HTTP/1.1 tunnel) or resets its
// stream (an HTTP/2 tunnel). Promise (package doc): a call "ends when the
// application gives up (it closes its connection or stream: the call's
// context ends ...)". The service's request must end within a second, long
// before MaxCallTime (20 s here).
func TestAttack26ApplicationLeavesTrickledAnswer(t *testing.T) {
	gone := make(chan time.Time, 4)
	base := upstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(200)
		rc := http.NewResponseController(w)
		for i := 0; i < 400; i++ {
			if _, err := w.Write([]byte(" ")); err != nil {
				break
			}
			if rc.Flush() != nil {
				break
			}
			select {
			case <-r.Context().Done():
				gone <- time.Now()
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
		gone <- time.Time{}
	}))
	f := serve(t, func(c *Config) {
		withBase(base)(c)
		c.MaxCallTime = 20 * time.Second
	})
	auth := mock.Token(xuid1, title)
	check := func(t *testing.T, left time.Time) {
		t.Helper()
		select {
		case g := <-gone:
			if g.IsZero() {
				t.Fatalf("the service trickled its whole 20 s answer though the application left")
			}
			if d := g.Sub(left); d > time.Second {
				t.Errorf("the service's request ended %v after the application left: the package doc promises a call \"ends when the application gives up (it closes its connection or stream: the call's context ends\"", d.Round(time.Millisecond))
			}
		case <-time.After(5 * time.Second):
			t.Errorf("the service's request still under way 5 s after the application left: the package doc promises a call \"ends when the application gives up (it closes its connection or stream: the call's context ends\"")
		}
	}
	t.Run("absolute", func(t *testing.T) {
		c, err := net.Dial("tcp", f.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "GET https://profile.xboxlive.com/users/me/profile/settings HTTP/1.1\r\nHost: profile.xboxlive.com\r\nAuthorization: %s\r\nx-xbl-contract-version: 3\r\n\r\n", auth)
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		io.ReadFull(resp.Body, make([]byte, 3))
		c.Close()
		check(t, time.Now())
	})
	t.Run("h1 tunnel", func(t *testing.T) {
		tc := attack26Tunnel(t, f, "profile.xboxlive.com", "http/1.1")
		fmt.Fprintf(tc, "GET /users/me/profile/settings HTTP/1.1\r\nHost: profile.xboxlive.com\r\nAuthorization: %s\r\nx-xbl-contract-version: 3\r\n\r\n", auth)
		resp, err := http.ReadResponse(bufio.NewReader(tc), nil)
		if err != nil {
			t.Fatal(err)
		}
		io.ReadFull(resp.Body, make([]byte, 3))
		tc.Close()
		check(t, time.Now())
	})
	t.Run("h2 reset", func(t *testing.T) {
		tc := attack26Tunnel(t, f, "profile.xboxlive.com", "h2")
		h := attack26H2{tc}
		io.WriteString(tc, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
		h.frame(4, 0, 0, nil)
		h.get(1, "profile.xboxlive.com", "/users/me/profile/settings", auth)
		// Read until stream 1's first DATA frame.
		br := bufio.NewReader(tc)
		tc.SetReadDeadline(time.Now().Add(5 * time.Second))
		for {
			hdr := make([]byte, 9)
			if _, err := io.ReadFull(br, hdr); err != nil {
				t.Fatal(err)
			}
			n := int(hdr[0])<<16 | int(hdr[1])<<8 | int(hdr[2])
			io.CopyN(io.Discard, br, int64(n))
			if hdr[3] == 0 && binary.BigEndian.Uint32(hdr[5:])&0x7fffffff == 1 {
				break
			}
		}
		h.frame(3, 0, 1, []byte{0, 0, 0, 8}) // RST_STREAM CANCEL
		check(t, time.Now())
	})
}

// TestAttack26H2HeldBodyNeverSentEnds: in an HTTP/2 tunnel, a POST announcing
// content-length 60,000 (a body the proxy holds to rewind it) sends 10
// bytes and then nothing, its stream left open. Promise (Config.MaxCallTime):
// "bounds a call from its arrival to the end of its answer ... its body's
// reads end then"; RELIABILITY.md's proxy table, "a body announced and
// never sent (held or chunked) ... ended at MaxCallTime" (tested there over
// HTTP/1.1). The stream must get its answer within MaxCallTime plus a
// second or two, and the connection still serve: no GOAWAY (the helper
// found one: the proxy's Connection: close, which HTTP/2 takes for the
// whole connection's end).
func TestAttack26H2HeldBodyNeverSentEnds(t *testing.T) {
	const maxCall = 500 * time.Millisecond
	f := serve(t, func(c *Config) { c.MaxCallTime = maxCall })
	tc := attack26Tunnel(t, f, "profile.xboxlive.com", "h2")
	h := attack26H2{tc}
	io.WriteString(tc, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
	h.frame(4, 0, 0, nil)
	hb := []byte{0x83, 0x87} // :method POST, :scheme https
	lit := func(n, v string) {
		hb = append(hb, 0x00)
		hb = hpackInt(hb, 0, 7, len(n))
		hb = append(hb, n...)
		hb = hpackInt(hb, 0, 7, len(v))
		hb = append(hb, v...)
	}
	lit(":path", "/users/batch/profile/settings")
	lit(":authority", "profile.xboxlive.com")
	lit("authorization", mock.Token(xuid1, title))
	lit("x-xbl-contract-version", "2")
	lit("content-type", "application/json")
	lit("content-length", "60000")
	h.frame(1, 4, 1, hb)                   // HEADERS, END_HEADERS only: a body follows
	h.frame(0, 0, 1, []byte(`{"userIds"`)) // 10 bytes, then nothing
	start := time.Now()
	br := bufio.NewReader(tc)
	tc.SetReadDeadline(time.Now().Add(maxCall + answerGrace + 3*time.Second))
	for {
		hdr := make([]byte, 9)
		if _, err := io.ReadFull(br, hdr); err != nil {
			t.Fatalf("no answer on the stream %v after its held body stalled (MaxCallTime %v): %v; Config.MaxCallTime \"bounds a call from its arrival to the end of its answer ... its body's reads end then\"",
				time.Since(start).Round(time.Millisecond), maxCall, err)
		}
		n := int(hdr[0])<<16 | int(hdr[1])<<8 | int(hdr[2])
		io.CopyN(io.Discard, br, int64(n))
		id := binary.BigEndian.Uint32(hdr[5:]) & 0x7fffffff
		if id == 1 && (hdr[3] == 1 || hdr[3] == 3) { // HEADERS or RST_STREAM
			t.Logf("stream 1 answered (frame type %d) after %v", hdr[3], time.Since(start).Round(time.Millisecond))
			break
		}
		if hdr[3] == 7 { // GOAWAY: the whole connection goes
			t.Errorf("GOAWAY after %v: one stream's stalled body ended the application's whole HTTP/2 connection "+
				"(its other streams' calls must then reconnect)", time.Since(start).Round(time.Millisecond))
		}
	}
	if d := time.Since(start); d > maxCall+answerGrace+time.Second {
		t.Errorf("the stream's answer came %v after its held body stalled (MaxCallTime %v)", d.Round(time.Millisecond), maxCall)
	}
}
