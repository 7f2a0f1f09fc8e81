package proxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"testing"

	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/mock/tlsca"
	"github.com/xblgo/fgrl/transport"
)

const (
	xuid1      = "2533274791234567"
	xuid2      = "2533274799999999"
	title      = "1234567890"
	profileURL = "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag"
)

// fixture is a proxy serving on loopback whose transport calls a mock
// over HTTPS at the services' names (mock.NewTLSServer), as xblcall proxy
// --via does, and a client that goes through it trusting its CA.
type fixture struct {
	up     *mock.Server
	tr     *transport.Transport
	srv    *Server
	ca     *tlsca.CA
	addr   string       // the proxy's
	client *http.Client // through the proxy, HTTPS_PROXY's way (CONNECT)
}

// serve starts a fixture; edit changes the Config before New.
func serve(t *testing.T, edit func(*Config)) *fixture {
	t.Helper()
	f := &fixture{up: mock.NewTLSServer(nil)}
	t.Cleanup(f.up.Close)
	f.tr = &transport.Transport{Base: f.up.Transport(), TitleID: title, Raw429: true}
	var err error
	if f.ca, err = tlsca.New(); err != nil {
		t.Fatal(err)
	}
	tlsConf, err := f.ca.TLSConfig(Hosts(limits.Default()))
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Transport: f.tr, TLS: tlsConf}
	if edit != nil {
		edit(&cfg)
	}
	if f.srv, err = New(cfg); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f.addr = ln.Addr().String()
	done := make(chan error, 1)
	go func() { done <- f.srv.Serve(ln) }()
	t.Cleanup(func() {
		f.srv.Close()
		if err := <-done; !errors.Is(err, ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	})
	f.client = f.clientTrusting(f.ca)
	return f
}

// clientTrusting returns a client through the proxy that trusts ca.
func (f *fixture) clientTrusting(ca *tlsca.CA) *http.Client {
	u, _ := url.Parse("http://" + f.addr)
	tr := &http.Transport{Proxy: http.ProxyURL(u), TLSClientConfig: &tls.Config{RootCAs: ca.Pool()}, ForceAttemptHTTP2: true}
	return &http.Client{Transport: tr}
}

// get sends a GET of url as user xuid with extra headers; it returns the
// answer with its body read, or the error.
func get(t *testing.T, c *http.Client, ctx context.Context, url, xuid string, hdr ...string) (*http.Response, string, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", mock.Token(xuid, title))
	req.Header.Set("x-xbl-contract-version", "3")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, string(b), err
}

// burst sends n GETs of url at once as xuid and returns the answers.
func burst(t *testing.T, c *http.Client, n int, url, xuid string, hdr ...string) []*http.Response {
	t.Helper()
	out := make([]*http.Response, n)
	var wg sync.WaitGroup
	for i := range out {
		wg.Go(func() {
			resp, _, err := get(t, c, context.Background(), url, xuid, hdr...)
			if err != nil {
				t.Errorf("call %d: %v", i, err)
				return
			}
			out[i] = resp
		})
	}
	wg.Wait()
	return out
}

// statuses counts answers by status, and the local refusals among the 429s.
func statuses(rs []*http.Response) (byStatus map[int]int, local int) {
	byStatus = map[int]int{}
	for _, r := range rs {
		if r == nil {
			continue
		}
		byStatus[r.StatusCode]++
		if r.Header.Get(HeaderRefused) == "local" {
			local++
		}
	}
	return byStatus, local
}

// callConn opens a connection to the proxy: a decrypted tunnel to
// profile.xboxlive.com (requests in origin form), or the proxy's port
// (requests in absolute form); pre is what goes before a request's path.
func callConn(t *testing.T, f *fixture, inTunnel bool) (conn net.Conn, br *bufio.Reader, pre string) {
	t.Helper()
	if inTunnel {
		tc, r := pxAtkTunnel(t, f, "profile.xboxlive.com")
		t.Cleanup(func() { tc.Close() })
		return tc, r, ""
	}
	c := dial(t, f.addr)
	return c, bufio.NewReader(c), "https://profile.xboxlive.com"
}

// spendBudget spends xuid's profile budget (10 calls in 15 s) with a burst
// of 12, so that its next profile call is refused locally.
func spendBudget(t *testing.T, f *fixture, xuid string) {
	t.Helper()
	if _, local := statuses(burst(t, f.client, 12, profileURL, xuid, HeaderFailFast, "true")); local == 0 {
		t.Fatal("the burst spent no budget: no call was refused locally")
	}
}

// readLocalRefusal reads the answer to a POST from br, its body too, and
// fails the test unless it is a 429 the proxy refused locally.
func readLocalRefusal(t *testing.T, br *bufio.Reader) *http.Response {
	t.Helper()
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer to the POST: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get(HeaderRefused) != "local" {
		t.Fatalf("want 429 refused locally, got %d %s=%q", resp.StatusCode, HeaderRefused, resp.Header.Get(HeaderRefused))
	}
	return resp
}
