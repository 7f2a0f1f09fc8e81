package mock

import (
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// TestAttack2SmallBodyThenSlowAnswerIsAnswered: bodyDeadline leaves its
// read deadline on the connection after the handler has read the whole
// body. The attack suspected that net/http, reading the connection in the
// background once the body has ended, would take that deadline for a
// client gone away and cancel the request's context, so that an answer
// slower than BodyTimeout (here the mock's injected latency, which waits
// on the request's context) would never come. Held: the POST is answered.
func TestAttack2SmallBodyThenSlowAnswerIsAnswered(t *testing.T) {
	h := NewHandler()
	if err := h.SetFaults(Faults{Latency: throttle.Duration(time.Second)}); err != nil {
		t.Fatal(err)
	}
	s := NewUnstartedServer(h)
	s.Conns = ConnLimits{BodyTimeout: 200 * time.Millisecond}
	s.Start()
	defer s.Close()
	req, _ := http.NewRequest("POST", "https://profile.xboxlive.com/users/batch/profile/settings",
		strings.NewReader(`{"userIds":["2533274790000001"],"settings":["Gamertag"]}`))
	req.Header.Set("Authorization", Token("2533274790000001", "1234567890"))
	req.Header.Set("x-xbl-contract-version", "2")
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatalf("a POST whose answer comes after 1 s of latency: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "profileUsers") {
		t.Errorf("a POST with a 60-byte body sent at once, answered after 1 s (BodyTimeout 200 ms): %d %q after %v; want 200 and the profiles", resp.StatusCode, b, time.Since(start).Round(time.Millisecond))
	}
}

// TestAttack2BurstDripIsBounded: a client that sends a 4 KiB burst at once
// and then one byte just inside each BodyTimeout (the idle bound pushed
// back each time) holds its connection no longer than the rate bound
// allows: BodyTimeout + 4 KiB / MinBodyRate (about 4.1 s here), not for as
// long as it keeps dripping. Held.
func TestAttack2BurstDripIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("seconds of dripping")
	}
	s := NewUnstartedServer(nil)
	s.Conns = ConnLimits{BodyTimeout: 100 * time.Millisecond}
	s.Start()
	defer s.Close()
	c, err := net.Dial("tcp", s.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const n = 1 << 20
	io.WriteString(c, "POST /device/authenticate HTTP/1.1\r\nHost: device.auth.xboxlive.com\r\nContent-Type: application/json\r\nContent-Length: "+strconv.Itoa(n)+"\r\n\r\n")
	c.Write(make([]byte, 4<<10))
	start := time.Now()
	var held time.Duration
	for time.Since(start) < 15*time.Second {
		time.Sleep(90 * time.Millisecond)
		if _, err := c.Write([]byte{' '}); err != nil {
			break
		}
		c.SetReadDeadline(time.Now().Add(time.Millisecond))
		var b [1]byte
		if _, err := c.Read(b[:]); err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				continue
			}
		}
		break // an answer or a close
	}
	held = time.Since(start)
	if held > 8*time.Second {
		t.Errorf("a 4 KiB burst then a byte every 90 ms held the connection %v; want at most about 4.1 s", held.Round(time.Millisecond))
	}
	t.Logf("held %v", held.Round(time.Millisecond))
}
