package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/mock/tlsca"
)

// servedMock runs xblcall mock with args until the test ends and returns
// its stdout and stderr buffers once it serves.
func servedMock(t *testing.T, args ...string) (out, errb *syncBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out, errb = &syncBuffer{}, &syncBuffer{}
	done := make(chan int, 1)
	go func() { done <- run(ctx, append([]string{"mock"}, args...), out, errb, withTestEnv(t)) }()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("mock exit %d: %s", code, errb.String())
		}
	})
	for !strings.Contains(out.String(), "metrics http") {
		select {
		case code := <-done:
			done <- code
			t.Fatalf("mock exited %d: %s", code, errb.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	return out, errb
}

// addrAfter returns the address printed after prefix ("https://").
func addrAfter(t *testing.T, s, prefix string) string {
	t.Helper()
	i := strings.Index(s, prefix)
	if i < 0 {
		t.Fatalf("no %s in %q", prefix, s)
	}
	return strings.Fields(s[i+len(prefix):])[0]
}

func trusting(t *testing.T, caFile string) *x509.CertPool {
	t.Helper()
	b, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		t.Fatalf("--ca-out wrote no certificate: %q", b)
	}
	return pool
}

// TestMockHTTPS: with --https and --ca-out, a client that trusts the CA
// reaches the services at their real names on the TLS port, and through the
// plain port as an HTTPS proxy; CONNECT to another host and a handshake for
// another host are refused, each with a log line naming it.
func TestMockHTTPS(t *testing.T) {
	t.Parallel()
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	out, errb := servedMock(t, "--addr", "127.0.0.1:0", "--https", "127.0.0.1:0", "--ca-out", caFile, "--log-format", "off")
	plain, tlsAddr := addrAfter(t, out.String(), "http://"), addrAfter(t, out.String(), "https://")
	pool := trusting(t, caFile)
	direct := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool},
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, tlsAddr)
		}}}
	proxyURL, _ := url.Parse("http://" + plain)
	proxied := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, Proxy: http.ProxyURL(proxyURL)},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	direct.CheckRedirect = proxied.CheckRedirect
	tok := mock.Token("2533274791234567", "1234567890")
	for name, c := range map[string]*http.Client{"--https": direct, "HTTPS_PROXY": proxied} {
		for _, tt := range []struct {
			url, auth string
			want      int
		}{
			{"https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag", tok, 200},
			{"https://userpresence.xboxlive.com/users/me?level=all", tok, 200},
			{"https://login.live.com/oauth20_authorize.srf?client_id=0000000048093EE3&response_type=code&redirect_uri=https://login.live.com/oauth20_desktop.srf", "", 302},
		} {
			req, _ := http.NewRequest("GET", tt.url, nil)
			if tt.auth != "" {
				req.Header.Set("Authorization", tt.auth)
			}
			resp, err := c.Do(req)
			if err != nil {
				t.Errorf("%s %s: %v", name, tt.url, err)
				continue
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Errorf("%s %s: %d, want %d", name, tt.url, resp.StatusCode, tt.want)
			}
		}
	}
	if _, err := proxied.Get("https://www.example.com/"); err == nil {
		t.Error("CONNECT to www.example.com went through")
	}
	if _, err := tls.Dial("tcp", tlsAddr, &tls.Config{ServerName: "bank.example.com", RootCAs: pool}); err == nil {
		t.Error("a handshake for bank.example.com went through")
	}
	deadline := time.Now().Add(5 * time.Second)
	for !(strings.Contains(errb.String(), `CONNECT refused`) && strings.Contains(errb.String(), `no service at "bank.example.com"`)) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if s := errb.String(); !strings.Contains(s, `"www.example.com"`) || !strings.Contains(s, `no service at "bank.example.com"`) {
		t.Errorf("stderr lacks the refusals:\n%s", s)
	}
}

// TestMockHosts: --hosts prints a hosts-file line for every exact host,
// sign-in hosts included, notes the patterns, and exits.
func TestMockHosts(t *testing.T) {
	t.Parallel()
	code, out, errs := xblcall(t, "mock", "--hosts")
	for _, want := range []string{"127.0.0.1 profile.xboxlive.com\n", "127.0.0.1 login.live.com\n", "127.0.0.1 xsts.auth.xboxlive.com\n", "# club*.xboxlive.com"} {
		if !strings.Contains(out, want) {
			t.Errorf("--hosts lacks %q:\n%s", want, out)
		}
	}
	if code != 0 || errs != "" {
		t.Errorf("exit %d: %s", code, errs)
	}
}

// TestMockCAFlags: a CA kept in files is used (--ca-out writes the same
// certificate); half a pair and a key other users can read are refused.
func TestMockCAFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca, err := tlsca.New()
	if err != nil {
		t.Fatal(err)
	}
	key, _ := ca.KeyPEM()
	certFile, keyFile, openKey := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "key.pem"), filepath.Join(dir, "open.pem")
	os.WriteFile(certFile, ca.CertPEM(), 0o644)
	os.WriteFile(keyFile, key, 0o600)
	os.WriteFile(openKey, key, 0o644)
	os.Chmod(openKey, 0o644)
	outFile := filepath.Join(dir, "out.pem")
	servedMock(t, "--addr", "127.0.0.1:0", "--ca-cert", certFile, "--ca-key", keyFile, "--ca-out", outFile, "--log-format", "off")
	if got, _ := os.ReadFile(outFile); string(got) != string(ca.CertPEM()) {
		t.Errorf("--ca-out wrote another certificate than --ca-cert's")
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--ca-cert", certFile}, "--ca-cert and --ca-key go together"},
		{[]string{"--ca-cert", certFile, "--ca-key", openKey}, "readable by other users"},
	} {
		code, _, errs := xblcall(t, append([]string{"mock", "--addr", "127.0.0.1:0"}, tt.args...)...)
		if code != 2 || !strings.Contains(errs, tt.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tt.args, code, errs, tt.want)
		}
	}
}

// TestReadmeHosts: docs/MOCK.md's list of served hosts is what --hosts
// prints.
func TestReadmeHosts(t *testing.T) {
	t.Parallel()
	_, out, _ := xblcall(t, "mock", "--hosts")
	readme, err := os.ReadFile("../../docs/MOCK.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(readme)
	i := strings.Index(s, "The hosts the mock serves")
	if i < 0 {
		t.Fatal("docs/MOCK.md has no list of the hosts the mock serves")
	}
	block := s[i:]
	block = block[strings.Index(block, "```\n")+4:]
	block = block[:strings.Index(block, "```")]
	if block != out {
		t.Errorf("docs/MOCK.md's host list differs from xblcall mock --hosts:\nREADME:\n%s\n--hosts:\n%s", block, out)
	}
}

// TestReachEveryHost: Node's and Python's own HTTPS clients, trusting the
// CA --ca-out wrote, reach every exact host the mock serves, straight at
// the --https port under the real name and through the plain port as an
// HTTPS proxy; through the proxy another host is refused with 403.
func TestReachEveryHost(t *testing.T) {
	t.Parallel()
	var hosts []string
	for _, h := range mock.NewHandler().Hosts() {
		if !strings.Contains(h, "*") {
			hosts = append(hosts, h)
		}
	}
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	out, _ := servedMock(t, "--addr", "127.0.0.1:0", "--https", "127.0.0.1:0", "--ca-out", caFile, "--log-format", "off")
	plain, tlsAddr := addrAfter(t, out.String(), "http://"), addrAfter(t, out.String(), "https://")
	resolve, _ := filepath.Abs("../../mock/testdata/node/resolve.cjs")
	for _, tt := range []struct {
		name string
		argv []string
	}{
		{"node direct", []string{"node", "--require", resolve, "testdata/reach.mjs", "direct"}},
		{"node proxy", []string{"node", "testdata/reach.mjs", "proxy"}},
		{"python direct", []string{"python3", "testdata/reach.py", "direct"}},
		{"python proxy", []string{"python3", "testdata/reach.py", "proxy"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := exec.LookPath(tt.argv[0]); err != nil {
				if os.Getenv("FGRL_REQUIRE_NODE") != "" {
					t.Fatalf("%s is missing", tt.argv[0])
				}
				t.Skipf("%s is missing", tt.argv[0])
			}
			asked := hosts
			if strings.HasSuffix(tt.name, "proxy") {
				asked = append(slices.Clone(hosts), "www.example.com")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, tt.argv[0], tt.argv[1:]...)
			cmd.Env = append(os.Environ(), "NODE_EXTRA_CA_CERTS="+caFile, "FGRL_MOCK_CA="+caFile, "FGRL_MOCK_ADDR="+tlsAddr,
				"FGRL_PROXY="+plain, "FGRL_MOCK_HOSTS="+strings.Join(asked, ","))
			b, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%v: %v\n%s", tt.argv, err, b)
			}
			got := map[string]string{}
			for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				host, status, _ := strings.Cut(line, " ")
				got[host] = status
			}
			for _, h := range hosts {
				if s := got[h]; len(s) != 3 || s[0] < '2' || s[0] > '4' {
					t.Errorf("%s: %q, want an HTTP status from the mock", h, s)
				}
			}
			if s, ok := got["www.example.com"]; ok && !strings.Contains(s, "403") {
				t.Errorf("www.example.com through the proxy: %q, want a 403 refusal", s)
			}
		})
	}
}

// TestReadmeEndpoints: docs/MOCK.md's table of the calls the mock answers
// is what --endpoints prints (generated from the route table).
func TestReadmeEndpoints(t *testing.T) {
	t.Parallel()
	_, out, _ := xblcall(t, "mock", "--endpoints")
	readme, err := os.ReadFile("../../docs/MOCK.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "\n"+out+"\n") || len(out) < 100 {
		t.Errorf("docs/MOCK.md lacks the table xblcall mock --endpoints prints (regenerate it):\n%s", out)
	}
}
