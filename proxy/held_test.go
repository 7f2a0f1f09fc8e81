package proxy

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/xblgo/fgrl/mock"
)

// TestBodiesAndWaits: over HTTP/1, with its user's budget spent and
// HeaderMaxWait 60s, a call with a body of known length up to 64 KiB, or
// chunked of any size, waits for its budget (the 15 s window and its 1 s
// margin) and the service gets the body whole, once; one with a body of
// known length over 64 KiB never waits: it is refused at once, as with
// HeaderFailFast, and nothing is sent.
func TestBodiesAndWaits(t *testing.T) {
	const post = "https://profile.xboxlive.com/users/batch/profile/settings"
	for _, tc := range []struct {
		name     string
		size     int
		chunked  bool
		wantCode int
		wantWait time.Duration
	}{
		{"length 64 KiB", maxRewindBody, false, 200, 16 * time.Second},
		{"length 64 KiB + 1", maxRewindBody + 1, false, 429, 0},
		{"chunked 1 KiB", 1 << 10, true, 200, 16 * time.Second},
		{"chunked 64 KiB", maxRewindBody, true, 200, 16 * time.Second},
		{"chunked 64 KiB + 1", maxRewindBody + 1, true, 200, 16 * time.Second},
		{"chunked 1 MiB", 1 << 20, true, 200, 16 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var posted []int
				svc := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					if r.Method == http.MethodPost {
						b, _ := io.ReadAll(r.Body)
						posted = append(posted, len(b))
					}
					rec := httptest.NewRecorder()
					rec.WriteHeader(200)
					return rec.Result(), nil
				})
				s := inProcess(t, svc, nil)
				for range 10 {
					send(s, context.Background(), "GET", profileURL, xuid1, nil)
				}
				var body io.Reader = strings.NewReader(strings.Repeat("1", tc.size))
				if tc.chunked {
					body = struct{ io.Reader }{body} // no length: httptest.NewRequest's ContentLength is -1
				}
				start := time.Now()
				rec := send(s, context.Background(), "POST", post, xuid1, body, HeaderMaxWait, "60s")
				took := time.Since(start)
				var want []int
				if tc.wantCode == 200 {
					want = []int{tc.size}
				}
				if diff := cmp.Diff(want, posted); diff != "" || rec.Code != tc.wantCode || took != tc.wantWait {
					t.Errorf("%d after %v, want %d after %v; bodies sent mismatch (-want +got):\n%s", rec.Code, took, tc.wantCode, tc.wantWait, diff)
				}
				if tc.wantCode == 429 && rec.Header().Get(HeaderRefused) != "local" {
					t.Errorf("the 429 is not marked %s: local", HeaderRefused)
				}
				if n := s.held.n.Load(); n != 0 {
					t.Errorf("%d bytes of bodies held after the call", n)
				}
			})
		})
	}
}

// TestGivingUpWithChunkedBodyAtTheBound: over HTTP/1, a call whose
// chunked body of 64 KiB came whole waits for its budget, and ends when
// the application closes its connection: the body was read ahead, so
// net/http sees the close. In absolute form and in a tunnel.
func TestGivingUpWithChunkedBodyAtTheBound(t *testing.T) {
	body := strings.Repeat("1", maxRewindBody)
	for _, inTunnel := range []bool{false, true} {
		t.Run(fmt.Sprintf("tunnel=%v", inTunnel), func(t *testing.T) {
			f := serve(t, nil)
			spendBudget(t, f, xuid1)
			before := f.tr.Stats()
			conn, _, pre := callConn(t, f, inTunnel)
			io.WriteString(conn, "POST "+pre+"/users/batch/profile/settings HTTP/1.1\r\nHost: profile.xboxlive.com\r\nAuthorization: "+
				mock.Token(xuid1, title)+"\r\nx-xbl-contract-version: 2\r\n"+HeaderMaxWait+": 60s\r\nTransfer-Encoding: chunked\r\n\r\n"+
				fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(body), body))
			for end := time.Now().Add(3 * time.Second); f.tr.Stats().Waits == before.Waits && time.Now().Before(end); {
				time.Sleep(10 * time.Millisecond)
			}
			if f.tr.Stats().Waits == before.Waits {
				t.Fatal("the call never waited for its budget")
			}
			conn.Close()
			closed := time.Now()
			for time.Since(closed) < 3*time.Second && f.srv.Stats().Cancelled == 0 {
				time.Sleep(10 * time.Millisecond)
			}
			if got := f.srv.Stats().Cancelled; got != 1 {
				t.Errorf("Stats().Cancelled = %d %v after the application closed its connection, want 1", got, time.Since(closed).Round(time.Millisecond))
			}
			if got := f.tr.Stats().Attempts - before.Attempts; got != 0 {
				t.Errorf("%d attempts sent, want none", got)
			}
			if n := f.srv.held.n.Load(); n != 0 {
				t.Errorf("%d bytes of bodies held after the call", n)
			}
		})
	}
}

// TestLongBodyNeverWaits: over HTTP/1, a call whose body has a length over
// 64 KiB, sent whole, with its user's budget spent and HeaderMaxWait 60s,
// is refused at once (429, HeaderRefused: local), and nothing is sent. In
// absolute form and in a tunnel.
func TestLongBodyNeverWaits(t *testing.T) {
	body := strings.Repeat("1", maxRewindBody+1)
	for _, inTunnel := range []bool{false, true} {
		t.Run(fmt.Sprintf("tunnel=%v", inTunnel), func(t *testing.T) {
			f := serve(t, nil)
			spendBudget(t, f, xuid1)
			before := f.tr.Stats()
			conn, br, pre := callConn(t, f, inTunnel)
			start := time.Now()
			resp, _, err := attack6Send(t, conn, br, "POST "+pre+"/users/batch/profile/settings HTTP/1.1\r\nHost: profile.xboxlive.com\r\nAuthorization: "+
				mock.Token(xuid1, title)+"\r\nx-xbl-contract-version: 2\r\n"+HeaderMaxWait+": 60s\r\n"+
				fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body))
			if err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); resp.StatusCode != 429 || resp.Header.Get(HeaderRefused) != "local" || took > time.Second {
				t.Errorf("%d %s=%q after %v; want a local 429 at once", resp.StatusCode, HeaderRefused, resp.Header.Get(HeaderRefused), took)
			}
			if st := f.tr.Stats(); st.Attempts != before.Attempts || st.Waits != before.Waits {
				t.Errorf("%d attempts and %d waits, want none", st.Attempts-before.Attempts, st.Waits-before.Waits)
			}
		})
	}
}
