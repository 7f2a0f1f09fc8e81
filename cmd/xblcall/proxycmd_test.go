package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/redistest"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/mock/tlsca"
	"github.com/xblgo/fgrl/proxy"
)

// servedProxy runs xblcall proxy with args until the test ends and
// returns its address and its stdout and stderr once it serves.
func servedProxy(t *testing.T, args ...string) (addr string, out, errb *syncBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out, errb = &syncBuffer{}, &syncBuffer{}
	done := make(chan int, 1)
	go func() { done <- run(ctx, append([]string{"proxy"}, args...), out, errb, withTestEnv(t)) }()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("proxy exit %d: %s", code, errb.String())
		}
	})
	for !strings.Contains(out.String(), "live page") {
		select {
		case code := <-done:
			done <- code
			t.Fatalf("proxy exited %d: %s", code, errb.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	return addrAfter(t, out.String(), "http://"), out, errb
}

// proxiedClient goes through the proxy at addr, trusting the CA in caFile.
func proxiedClient(t *testing.T, addr, caFile string) *http.Client {
	t.Helper()
	u, err := url.Parse("http://" + addr)
	if err != nil || u.Port() == "" {
		t.Fatalf("no proxy address in %q: %v", addr, err) // never a client without its proxy: it would go to the network
	}
	tr := &http.Transport{Proxy: http.ProxyURL(u), TLSClientConfig: &tls.Config{RootCAs: trusting(t, caFile)}}
	t.Cleanup(tr.CloseIdleConnections) // before the proxy stops: a tunnel opened and never used holds its graceful shutdown
	return &http.Client{Transport: tr}
}

// profileReads sends n profile reads at once through c as the mock's
// default user, failing fast, and counts the statuses and local 429s.
func profileReads(t *testing.T, c *http.Client, n int) (statuses map[int]int, local int) {
	t.Helper()
	var mu sync.Mutex
	statuses = map[int]int{}
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			req, _ := http.NewRequest("GET", "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag", nil)
			req.Header.Set("Authorization", mock.Token("2533274791234567", "1234567890"))
			req.Header.Set(proxy.HeaderFailFast, "true")
			resp, err := c.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			mu.Lock()
			defer mu.Unlock()
			statuses[resp.StatusCode]++
			if resp.Header.Get(proxy.HeaderRefused) == "local" {
				local++
			}
		})
	}
	wg.Wait()
	return statuses, local
}

// mockNo429 asks the mock at addr (its admin API's check) whether it
// answered any call with 429.
func mockNo429(t *testing.T, addr string) {
	t.Helper()
	resp, err := http.Post("http://"+addr+"/_fgrl/api/check", "application/json", strings.NewReader(`{"no429": true}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("the mock answered 429s: %s", b)
	}
}

// TestProxyBurst: xblcall proxy --via <mock> --ca-out ca.pem, and 30
// profile reads at once through it: the allowance (10) served, the rest
// answered 429 by the proxy, marked local; the mock answers no call 429;
// --status lists the key's budget.
func TestProxyBurst(t *testing.T) {
	t.Parallel()
	mockOut, _ := servedMock(t, "--addr", "127.0.0.1:0", "--log-format", "off")
	mockAddr := addrAfter(t, mockOut.String(), "http://")
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	addr, _, _ := servedProxy(t, "--addr", "127.0.0.1:0", "--via", "http://"+mockAddr, "--ca-out", caFile, "--log-format", "off")
	got, local := profileReads(t, proxiedClient(t, addr, caFile), 30)
	if got[200] != 10 || got[429] != 20 || local != 20 {
		t.Errorf("statuses %v, %d local; want 10 served and 20 local 429s", got, local)
	}
	mockNo429(t, mockAddr)
	code, out, errs := xblcall(t, "proxy", "--status", "--addr", addr)
	if code != 0 || !strings.Contains(out, "10 served, 20 refused locally") || !strings.Contains(out, "profile") || !strings.Contains(out, "10/10") {
		t.Errorf("--status: exit %d\n%s%s", code, out, errs)
	}
	code, out, _ = xblcall(t, "proxy", "--status", "--json", "--addr", addr)
	var st proxy.Status
	if err := json.Unmarshal([]byte(out), &st); code != 0 || err != nil || len(st.Keys) != 1 || st.Keys[0].Burst.Count != 10 {
		t.Errorf("--status --json: exit %d, %v: %s", code, err, out)
	}
}

// TestProxyFleet: two proxies on one Redis keep one budget: 15 reads at
// once through each serve 10 in all, and the mock answers none 429.
func TestProxyFleet(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	mockOut, _ := servedMock(t, "--addr", "127.0.0.1:0", "--log-format", "off")
	mockAddr := addrAfter(t, mockOut.String(), "http://")
	dir := t.TempDir()
	var clients []*http.Client
	for _, name := range []string{"a.pem", "b.pem"} {
		addr, _, _ := servedProxy(t, "--addr", "127.0.0.1:0", "--via", "http://"+mockAddr, "--ca-out", filepath.Join(dir, name),
			"--redis", "redis://"+srv.Addr+"/0", "--title", "1234567890", "--log-format", "off")
		clients = append(clients, proxiedClient(t, addr, filepath.Join(dir, name)))
	}
	served := 0
	for _, c := range clients {
		got, _ := profileReads(t, c, 15)
		served += got[200]
	}
	if served != 10 {
		t.Errorf("the fleet served %d, want one burst of 10", served)
	}
	mockNo429(t, mockAddr)
}

// TestProxyMetrics: with --metrics, /metrics on the proxy's address has the
// transport's counters.
func TestProxyMetrics(t *testing.T) {
	t.Parallel()
	mockOut, _ := servedMock(t, "--addr", "127.0.0.1:0", "--log-format", "off")
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	addr, _, _ := servedProxy(t, "--addr", "127.0.0.1:0", "--via", "http://"+addrAfter(t, mockOut.String(), "http://"),
		"--ca-out", caFile, "--metrics", "--log-format", "off")
	profileReads(t, proxiedClient(t, addr, caFile), 12)
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"fgrl_transport_attempts_total 10", "fgrl_transport_local_refusals_total 2"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("/metrics has no %q:\n%.2000s", want, b)
		}
	}
}

// TestProxyCAFiles: --ca-key-out writes a new CA's key readable by its
// owner only, which --ca-cert and --ca-key then take (the mock's checks);
// a client trusting the first run's ca.pem reaches the second run.
func TestProxyCAFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "ca-key.pem")
	servedProxy(t, "--addr", "127.0.0.1:0", "--ca-out", cert, "--ca-key-out", key, "--log-format", "off")
	fi, err := os.Stat(key)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("--ca-key-out: %v, mode %v; want 0600", err, fi.Mode().Perm())
	}
	if _, err := tlsca.Load(cert, key); err != nil {
		t.Fatalf("the files do not load as a CA: %v", err)
	}
	mockOut, _ := servedMock(t, "--addr", "127.0.0.1:0", "--log-format", "off")
	second, _, _ := servedProxy(t, "--addr", "127.0.0.1:0", "--ca-cert", cert, "--ca-key", key,
		"--via", "http://"+addrAfter(t, mockOut.String(), "http://"), "--log-format", "off")
	if got, _ := profileReads(t, proxiedClient(t, second, cert), 1); got[200] != 1 {
		t.Errorf("through the second proxy, on the kept CA: %v", got)
	}
}

// TestProxyUsageErrors: malformed flags exit 2 naming what is wrong,
// before anything listens.
func TestProxyUsageErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	open := filepath.Join(dir, "open-key.pem")
	os.WriteFile(open, []byte("x"), 0o644)
	notPEM := filepath.Join(dir, "not.pem")
	os.WriteFile(notPEM, []byte("not a certificate"), 0o600)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"extra"}, "no arguments"},
		{[]string{"--addr", "localhost:http"}, "--addr"},
		{[]string{"--via", "http://10.0.0.1:8080"}, "only a loopback address"},
		{[]string{"--ca-cert", filepath.Join(dir, "ca.pem")}, "--ca-cert and --ca-key go together"},
		{[]string{"--ca-cert", notPEM, "--ca-key", open}, "readable by other users"},
		{[]string{"--ca-cert", notPEM, "--ca-key", notPEM, "--ca-key-out", filepath.Join(dir, "k.pem")}, "--ca-key-out writes a new CA's key"},
		{[]string{"--upstream-ca", notPEM}, "holds no PEM certificate"},
		{[]string{"--upstream-ca", filepath.Join(dir, "missing.pem")}, "--upstream-ca"},
		{[]string{"--max-wait", "10m"}, "--max-wait"},
		{[]string{"--title", "x"}, "--title"},
		{[]string{"--json"}, "--json goes with --status"},
		{[]string{"--redis-ca", notPEM}, "--redis-ca needs --redis"},
		{[]string{"--redis", "mysql://x"}, "not a Redis URL"},
		{[]string{"--max-conns", "0"}, "must be positive"},
		{[]string{"--log-format", "xml"}, "--log-format"},
	} {
		code, _, errs := xblcall(t, append([]string{"proxy", "--addr", "127.0.0.1:0"}, tc.args...)...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d %q, want 2 naming %q", tc.args, code, errs, tc.want)
		}
	}
}

// TestProxyOffLoopback: listening off loopback needs --access-token
// (exit 2 without one, before anything listens; the token is never
// printed); with --status, no proxy at the address is a failure (exit 1),
// not a usage error.
func TestProxyOffLoopback(t *testing.T) {
	t.Parallel()
	if code, out, errs := xblcall(t, "proxy", "--addr", "0.0.0.0:0", "--log-format", "off"); code != 2 || !strings.Contains(errs, "--access-token") {
		t.Errorf("off loopback without a token: exit %d %q %q, want 2 naming --access-token", code, out, errs)
	}
	const token = "k7Yq2bWm9Rz4LpXc"
	_, out, errb := servedProxy(t, "--addr", "0.0.0.0:0", "--access-token", token, "--log-format", "text")
	if strings.Contains(out.String()+errb.String(), token) {
		t.Errorf("the access token was printed:\n%s%s", out, errb)
	}
	if code, _, errs := xblcall(t, "proxy", "--status", "--addr", "127.0.0.1:1"); code != 1 || !strings.Contains(errs, "no proxy answers") {
		t.Errorf("--status of nothing: exit %d %q", code, errs)
	}
}

// TestProxyViaItself: --via at the proxy's own address (its port on
// loopback, by any loopback name, or on every address) is a usage error:
// every call would come back to the proxy.
func TestProxyViaItself(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	for _, tc := range []struct{ addr, via string }{
		{"127.0.0.1:" + port, "http://127.0.0.1:" + port},
		{"127.0.0.1:" + port, "http://localhost:" + port},
		{"127.0.0.1:" + port, "https://127.0.0.1:" + port},
	} {
		code, _, errs := xblcall(t, "proxy", "--addr", tc.addr, "--via", tc.via, "--log-format", "off")
		if code != 2 || !strings.Contains(errs, "the proxy's own address") {
			t.Errorf("--addr %s --via %s: exit %d %q, want 2 naming the loop", tc.addr, tc.via, code, errs)
		}
	}
	code, _, errs := xblcall(t, "proxy", "--addr", "0.0.0.0:"+port, "--access-token", "t0k3n", "--via", "http://127.0.0.1:"+port, "--log-format", "off")
	if code != 2 || !strings.Contains(errs, "the proxy's own address") {
		t.Errorf("--addr 0.0.0.0:%s --via itself: exit %d %q, want 2", port, code, errs)
	}
}
