package proxy

import (
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock"
)

// attack87CountingRT wraps the fixture's upstream so that the calls reaching
// the service are counted.
type attack87CountingRT struct {
	base http.RoundTripper
	n    atomic.Int64
}

func (c *attack87CountingRT) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.base.RoundTrip(r)
}

// TestAttack87GivingUpMidWaitWithBodyEndsCall: a foreign client (HTTP/1.1 in a
// tunnel, as curl, Node, Python and .NET speak it) sends a call with a
// chunked body (sent whole) while its budget is spent, so the call waits;
// the client gives up and closes its connection. The package doc:
//
//	"A call the budget lets through waits as the transport waits, and ends
//	when the application gives up (it closes its connection or stream: the
//	call's context ends, and a budget slot it was waiting for is given
//	back)."
//
// So the call must end (Stats().Cancelled) soon after the close, and never
// be sent to the service once the budget frees up.
func TestAttack87GivingUpMidWaitWithBodyEndsCall(t *testing.T) {
	var count *attack87CountingRT
	f := serve(t, func(c *Config) {
		count = &attack87CountingRT{base: c.Transport.Base}
		c.Transport.Base = count
	})
	spendBudget(t, f, xuid1)
	sentBefore := count.n.Load()

	tc, _ := pxAtkTunnel(t, f, "profile.xboxlive.com")
	req := "GET /users/me/profile/settings?settings=Gamertag HTTP/1.1\r\nHost: profile.xboxlive.com\r\n" +
		"Authorization: " + mock.Token(xuid1, title) + "\r\nx-xbl-contract-version: 3\r\n" +
		"Fgrl-Max-Wait: 60s\r\nTransfer-Encoding: chunked\r\n\r\n" +
		"2\r\n{}\r\n0\r\n\r\n"
	if _, err := io.WriteString(tc, req); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // the call is waiting for its budget
	tc.Close()                         // the application gives up
	closedAt := time.Now()

	for time.Since(closedAt) < 3*time.Second && f.srv.Stats().Cancelled == 0 {
		time.Sleep(50 * time.Millisecond)
	}
	if st := f.srv.Stats(); st.Cancelled != 1 {
		t.Errorf("Stats().Cancelled = %d %v after the application closed its connection, want 1 (stats %+v)",
			st.Cancelled, time.Since(closedAt).Round(time.Millisecond), st)
	}
	deadline := closedAt.Add(20 * time.Second) // past the burst window's end (15 s)
	for time.Now().Before(deadline) && count.n.Load() == sentBefore {
		time.Sleep(100 * time.Millisecond)
	}
	if got := count.n.Load() - sentBefore; got != 0 {
		t.Errorf("the call of an application that had given up was sent to the service %d time(s), %v after it left",
			got, time.Since(closedAt).Round(time.Millisecond))
	}
}
