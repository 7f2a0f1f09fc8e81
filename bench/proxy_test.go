package bench

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/mock/tlsca"
	"github.com/xblgo/fgrl/proxy"
	"github.com/xblgo/fgrl/transport"
)

// proxyContenders returns the two ways a program calls the services, each
// as a loopbackContender: "direct" is a Go program's, the fgrl transport
// in-process; "proxy" is any other language's, an http.Transport with the
// proxy as HTTPS_PROXY (CONNECT once, then TLS to the proxy's CA inside the
// tunnel) and the proxy's fgrl transport behind it. Both transports send
// to the same net/http server answering {} on loopback, as xblcall proxy
// --via does (the URL's host stays profile.xboxlive.com), so the
// difference between the two is what the proxy adds: the hop, its TLS and
// its request handling. Limits no run reaches, over benchUsers users.
func proxyContenders(b *testing.B) []loopbackContender {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, "{}")
	}))
	b.Cleanup(up.Close)
	upURL, _ := url.Parse(up.URL)
	lim, err := limits.Read(strings.NewReader(`{"rules": [{"service": "profile", "hosts": ["profile.xboxlive.com"], "burst": 100000, "sustain": 100000}]}`))
	if err != nil {
		b.Fatal(err)
	}
	via := func() http.RoundTripper { // to the loopback server, as --via
		base := &http.Transport{MaxIdleConnsPerHost: 4, IdleConnTimeout: time.Minute}
		b.Cleanup(base.CloseIdleConnections)
		return viaBase{base, upURL.Host}
	}
	fgrl := func() *transport.Transport {
		return &transport.Transport{Base: via(), Limits: lim, TitleID: "1234567890", Raw429: true}
	}
	ca, err := tlsca.New()
	if err != nil {
		b.Fatal(err)
	}
	tlsConf, err := ca.TLSConfig(proxy.Hosts(lim))
	if err != nil {
		b.Fatal(err)
	}
	srv, err := proxy.New(proxy.Config{Transport: fgrl(), TLS: tlsConf, Limits: lim})
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	b.Cleanup(func() {
		srv.Close()
		if err := <-done; !errors.Is(err, proxy.ErrServerClosed) {
			b.Errorf("Serve: %v", err)
		}
	})
	client := &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: ln.Addr().String()}),
		TLSClientConfig: &tls.Config{RootCAs: ca.Pool()}, MaxIdleConnsPerHost: 4, IdleConnTimeout: time.Minute}
	b.Cleanup(client.CloseIdleConnections) // before the proxy's Close, so no tunnel is left to cut
	cs := []loopbackContender{
		{name: "direct", rt: fgrl(), reqs: requests(context.Background(), profileURL)},
		{name: "proxy", rt: client, reqs: requests(context.Background(), profileURL)},
	}
	for _, c := range cs {
		for _, r := range c.reqs[:4] { // warm the connections (and the proxy's tunnel)
			c.roundTrip(b, r)
		}
	}
	return cs
}

// viaBase sends every request to addr over plain HTTP, its host kept in
// the Host header: xblcall proxy --via's base.
type viaBase struct {
	base *http.Transport
	addr string
}

func (v viaBase) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	r.Host = req.URL.Host
	r.URL.Scheme, r.URL.Host = "http", v.addr
	return v.base.RoundTrip(r)
}

// BenchmarkProxy is one call of each way in turn, for its allocations:
// the proxy's include the client's and the proxy's own, both in this
// process.
func BenchmarkProxy(b *testing.B) {
	for _, c := range proxyContenders(b) {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				c.roundTrip(b, c.reqs[i%len(c.reqs)])
			}
		})
	}
}

// BenchmarkProxyPaired measures what the proxy adds to a call, with the
// two ways taking turns in blocks of -block calls (50), in a shuffled order,
// within one benchmark (as BenchmarkLoopbackPaired, and for the same
// reason: the loopback round trip drifts more between runs than the
// difference measured). An op is one block of each. It reports each way's
// wall time and process CPU time per call (client, proxy and server
// together) and the proxy's addition to each, in ns and as a multiple of
// the direct call.
func BenchmarkProxyPaired(b *testing.B) {
	cs := proxyContenders(b)
	wall, cpu, cpuOK, calls := takeTurns(b, cs)
	report := func(total []int64, unit string) {
		direct, via := float64(total[0])/float64(calls), float64(total[1])/float64(calls)
		b.ReportMetric(direct, "direct-"+unit)
		b.ReportMetric(via, "proxy-"+unit)
		b.ReportMetric(via-direct, "added-"+unit)
		b.ReportMetric(via/direct, "proxy/direct-"+strings.TrimSuffix(unit, "/call"))
	}
	report(wall, "ns/call")
	if cpuOK {
		report(cpu, "cpu-ns/call")
	}
}
