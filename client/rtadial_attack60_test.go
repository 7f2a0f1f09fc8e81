package client

// atk (helper 174): an outside attack on dialFailure, "an upgrade without
// an answer tells the context's end or the network's own error as they
// are, and otherwise only the kind of failure (an answer that is not
// HTTP, a certificate refused, a connection closed before the answer)"
// (RELIABILITY.md, 2026-12-07 03:30). Is the kind still right for a user
// debugging a wrong endpoint or a TLS misconfiguration, and can a hostile
// service still get its text in?

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// attack60NotHTTP is what dialFailure tells of "an answer net/http could not
// read".
const attack60NotHTTP = "not HTTP that net/http reads"

// attack60DialErr subscribes with a client whose RTA endpoint is endpoint and
// whose RTATransport is rt, and returns the first ConnectionState error:
// its text, and the text of the *Error's cause.
func attack60DialErr(t *testing.T, endpoint string, rt http.RoundTripper) (full, cause string) {
	t.Helper()
	c, err := New(Config{TitleID: title, RTATransport: rt, Endpoints: map[string]string{"rta.xboxlive.com": endpoint},
		Tokens: TokenFunc(func(context.Context, string) (Token, error) {
			return Token{Authorization: "XBL3.0 x=1111;attack60secrettoken"}, nil
		})})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	ch, err := c.As(me).Subscribe(ctx, PresenceOf(me))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		cancel()
		for range ch {
		}
	}()
	for ev := range ch {
		cs, ok := ev.(*ConnectionState)
		if !ok || cs.Err == nil {
			continue
		}
		full = cs.Err.Error()
		var e *Error
		if errors.As(cs.Err, &e) && e.Err != nil {
			cause = e.Err.Error()
		}
		return full, cause
	}
	t.Fatal("no ConnectionState error before the events ended")
	return "", ""
}

// attack60Cert makes a self-signed CA certificate for the given names, valid
// from notBefore to notAfter, and its pool.
func attack60Cert(t *testing.T, dns []string, ips []net.IP, notBefore, notAfter time.Time) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(174), Subject: pkix.Name{CommonName: "attack60"},
		NotBefore: notBefore, NotAfter: notAfter, DNSNames: dns, IPAddresses: ips,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

// attack60TLSServer starts a loopback TLS server with cert (none: httptest's)
// and the given server TLS config changes.
func attack60TLSServer(t *testing.T, cert *tls.Certificate, conf func(*tls.Config)) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no websocket here", http.StatusNotFound)
	}))
	srv.TLS = &tls.Config{}
	if cert != nil {
		srv.TLS.Certificates = []tls.Certificate{*cert}
	}
	if conf != nil {
		conf(srv.TLS)
	}
	srv.Config.ErrorLog = nil
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// held: RELIABILITY.md (2026-12-07 03:30) "otherwise only the kind of
// failure (an answer that is not HTTP, a certificate refused, ...)":
// a certificate of an unknown authority, one for other names than the
// endpoint's, and an expired one (each a user's TLS misconfiguration)
// are all told as a certificate refused, and the connection's own error
// (a port nobody listens on: a wrong endpoint) as it is.
func TestAttack60RTADialCertificateKindsTold(t *testing.T) {
	now := time.Now()
	loop := []net.IP{net.IPv4(127, 0, 0, 1)}
	expired, expiredPool := attack60Cert(t, nil, loop, now.Add(-48*time.Hour), now.Add(-time.Hour))
	other, otherPool := attack60Cert(t, []string{"rta.xboxlive.com"}, nil, now.Add(-time.Hour), now.Add(24*time.Hour))

	t.Run("unknown authority", func(t *testing.T) {
		srv := attack60TLSServer(t, nil, nil)
		_, cause := attack60DialErr(t, srv.URL, &http.Transport{})
		if !strings.Contains(cause, "certificate was refused") {
			t.Errorf("told %q, want a certificate refused", cause)
		}
	})
	t.Run("hostname mismatch", func(t *testing.T) {
		srv := attack60TLSServer(t, &other, nil)
		_, cause := attack60DialErr(t, srv.URL, &http.Transport{TLSClientConfig: &tls.Config{RootCAs: otherPool}})
		if !strings.Contains(cause, "certificate was refused") {
			t.Errorf("told %q, want a certificate refused", cause)
		}
	})
	t.Run("expired", func(t *testing.T) {
		srv := attack60TLSServer(t, &expired, nil)
		_, cause := attack60DialErr(t, srv.URL, &http.Transport{TLSClientConfig: &tls.Config{RootCAs: expiredPool}})
		if !strings.Contains(cause, "certificate was refused") {
			t.Errorf("told %q, want a certificate refused", cause)
		}
	})
	t.Run("nobody listening", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		_, cause := attack60DialErr(t, "https://"+addr, &http.Transport{})
		if !strings.Contains(cause, "connection refused") || !strings.Contains(cause, addr) {
			t.Errorf("told %q, want the network's own error naming %s", cause, addr)
		}
	})
}

// attack60SilentListener accepts connections and never writes a byte, until
// the test ends.
func attack60SilentListener(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { close(done); ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				go io.Copy(io.Discard, c)
				<-done
			}()
		}
	}()
	return ln.Addr().String()
}

// TestAttack60RTADialTLSHandshakeTimeoutToldAsNotHTTP: a service that takes
// the TCP connection and never answers the TLS handshake, reached through
// an RTATransport with a TLSHandshakeTimeout (http.DefaultTransport, the
// client's default RTATransport, has 10 s; 300 ms here): net/http fails
// the upgrade with its own fixed text, "net/http: TLS handshake timeout",
// holding none of the service's bytes (it sent none). dialFailure tells
// it as "the service's answer to the upgrade is not HTTP that net/http
// reads": an answer that never came is told as one that came and was not
// HTTP. (net/http's ResponseHeaderTimeout, which is errors.Is
// context.DeadlineExceeded, is told as it is:
// TestAttack60RTADialResponseHeaderTimeoutTold.) A user debugging a stalled
// endpoint is told the wrong kind.
//
// BREAK. Promise: RELIABILITY.md (2026-12-07 03:30) "an upgrade without
// an answer tells the context's end or the network's own error as they
// are, and otherwise only the kind of failure (an answer that is not
// HTTP, a certificate refused, a connection closed before the answer)";
// dialFailure's godoc: "otherwise (an answer net/http could not read, a
// certificate refused) only what kind of failure it was".
func TestAttack60RTADialTLSHandshakeTimeoutToldAsNotHTTP(t *testing.T) {
	addr := attack60SilentListener(t)
	_, cause := attack60DialErr(t, "https://"+addr, &http.Transport{TLSHandshakeTimeout: 300 * time.Millisecond})
	if strings.Contains(cause, attack60NotHTTP) || !strings.Contains(strings.ToLower(cause), "timeout") {
		t.Errorf("a service that never answered the TLS handshake: told %q", cause)
	}
}

// held: RELIABILITY.md (2026-12-07 03:30) "an upgrade without an answer
// tells the context's end or the network's own error as they are": a
// service that never answers the upgrade, through an RTATransport with a
// ResponseHeaderTimeout, is told as net/http's "timeout awaiting response
// headers", naming the endpoint.
func TestAttack60RTADialResponseHeaderTimeoutTold(t *testing.T) {
	addr := attack60SilentListener(t)
	_, cause := attack60DialErr(t, "http://"+addr, &http.Transport{ResponseHeaderTimeout: 300 * time.Millisecond})
	if !strings.Contains(cause, "timeout awaiting response headers") || !strings.Contains(cause, addr) {
		t.Errorf("a service that never answered the upgrade: told %q", cause)
	}
}

// TestAttack60RTADialTLSFailuresToldAsNotHTTP: TLS misconfigurations that are
// not a certificate the client refused, each failing with crypto/tls's or
// net/http's fixed text (no byte of the service's): an https endpoint
// that is a plain HTTP server ("http: server gave HTTP response to HTTPS
// client": the answer WAS HTTP), a service that speaks only TLS 1.3 to a
// client that allows up to 1.2 ("remote error: tls: protocol version not
// supported", a net.OpError of Op "remote error"), and a service that
// requires a client certificate ("remote error: tls: certificate
// required"). Each is told "the service's answer to the upgrade is not
// HTTP that net/http reads": nothing tells the user it is TLS, let alone
// which part.
//
// BREAK. Promise: RELIABILITY.md (2026-12-07 03:30) "and otherwise only
// the kind of failure (an answer that is not HTTP, a certificate refused,
// a connection closed before the answer)": the kind told is wrong (an
// HTTP answer told as not HTTP; a TLS refusal by the service told as an
// answer net/http could not read).
func TestAttack60RTADialTLSFailuresToldAsNotHTTP(t *testing.T) {
	t.Run("plain HTTP at an https endpoint", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		t.Cleanup(srv.Close)
		u, _ := url.Parse(srv.URL)
		_, cause := attack60DialErr(t, "https://"+u.Host, &http.Transport{})
		if strings.Contains(cause, attack60NotHTTP) {
			t.Errorf("an HTTP server answering an https endpoint: told %q", cause)
		}
	})
	t.Run("TLS version", func(t *testing.T) {
		srv := attack60TLSServer(t, nil, func(c *tls.Config) { c.MinVersion = tls.VersionTLS13 })
		pool := x509.NewCertPool()
		pool.AddCert(srv.Certificate())
		_, cause := attack60DialErr(t, srv.URL, &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MaxVersion: tls.VersionTLS12}})
		if strings.Contains(cause, attack60NotHTTP) || !strings.Contains(strings.ToLower(cause), "tls") {
			t.Errorf("a service refusing the client's TLS version: told %q", cause)
		}
	})
	t.Run("client certificate required", func(t *testing.T) {
		srv := attack60TLSServer(t, nil, func(c *tls.Config) { c.ClientAuth = tls.RequireAnyClientCert })
		pool := x509.NewCertPool()
		pool.AddCert(srv.Certificate())
		_, cause := attack60DialErr(t, srv.URL, &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}})
		if strings.Contains(cause, attack60NotHTTP) || !strings.Contains(strings.ToLower(cause), "tls") {
			t.Errorf("a service requiring a client certificate: told %q", cause)
		}
	})
}

// attack60RawServer answers every connection with answer(conn index), then
// closes it.
func attack60RawServer(t *testing.T, answer func(k int) []byte) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for k := 0; ; k++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func(k int) {
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				buf := make([]byte, 4096)
				c.Read(buf) // the ClientHello, or the request
				c.Write(answer(k))
			}(k)
		}
	}()
	return ln.Addr().String()
}

// held: RELIABILITY.md (2026-12-07 03:30) "an upgrade without an answer
// tells ... only the kind of failure" and its reason, "net/http's and
// crypto/x509's errors quote the service's bytes (a malformed status or
// header line, a certificate's names)": a hostile service at an https
// endpoint answers the ClientHello with bytes of its choice (an HTTP
// status line, a TLS record header then text, a TLS alert record), and a
// TLS service whose certificate's DNS name and subject are the text; the
// text ("ATK174ECHO...") reaches no error.
func TestAttack60RTADialHostileTLSAnswersTellNoText(t *testing.T) {
	const echo = "ATK174ECHOxxxxxxxxxxxxxxxxxxxx"
	for name, raw := range map[string][]byte{
		"HTTP status line":  []byte("HTTP/1.1 400 " + echo + "\r\n\r\n"),
		"HTTP garbage":      []byte("HTTP/" + echo + "\r\n\r\n"),
		"record then text":  append([]byte{0x16, 0x03, 0x03, 0x00, byte(len(echo))}, echo...),
		"alert record":      {0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28},
		"oversized record":  append([]byte{0x16, 0x03, 0x03, 0xff, 0xff}, echo...),
		"version in record": append([]byte{0x16, 0x41, 0x54, 0x00, byte(len(echo))}, echo...),
	} {
		t.Run(name, func(t *testing.T) {
			addr := attack60RawServer(t, func(int) []byte { return raw })
			full, cause := attack60DialErr(t, "https://"+addr, &http.Transport{})
			t.Logf("told %q", cause)
			if strings.Contains(full+cause, "ATK174ECHO") {
				t.Errorf("the service's text reached the error: %q", full)
			}
		})
	}
	t.Run("certificate names", func(t *testing.T) {
		now := time.Now()
		cert, pool := attack60Cert(t, []string{strings.ToLower(echo) + ".example"}, nil, now.Add(-time.Hour), now.Add(time.Hour))
		srv := attack60TLSServer(t, &cert, nil)
		full, cause := attack60DialErr(t, srv.URL, &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}})
		t.Logf("told %q", cause)
		if strings.Contains(strings.ToLower(full+cause), strings.ToLower("ATK174ECHO")) {
			t.Errorf("the certificate's names reached the error: %q", full)
		}
	})
}

// held: the same promise, through the user's HTTP proxy: a hostile
// proxy (or one a hostile service sits behind) refusing the CONNECT with
// a reason phrase of its choosing, or answering it 200 and then sending
// an HTTP status line of its choosing inside the tunnel. net/http puts
// the reason phrase in a *net.OpError of Op "proxyconnect", not "dial",
// "read" or "write", so the "as they are" branch is not taken; the text
// reaches no error. (The kind told is "the service's answer to the
// upgrade is not HTTP that net/http reads" for a proxy's 403: logged.)
func TestAttack60RTADialHostileProxyConnectTellsNoText(t *testing.T) {
	const echo = "ATK174ECHOxxxxxxxxxxxxxxxxxxxx"
	for name, raw := range map[string]string{
		"CONNECT refused":       "HTTP/1.1 403 " + echo + "\r\nContent-Length: 0\r\n\r\n",
		"CONNECT refused 407":   "HTTP/1.1 407 " + echo + "\r\nProxy-Authenticate: " + echo + "\r\nContent-Length: 0\r\n\r\n",
		"CONNECT malformed":     "HTTP/1.1 " + echo + "\r\n\r\n",
		"HTTP inside tunnel":    "HTTP/1.1 200 OK\r\n\r\nHTTP/1.1 400 " + echo + "\r\n\r\n",
		"garbage inside tunnel": "HTTP/1.1 200 OK\r\n\r\n" + echo + "\r\n\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			addr := attack60RawServer(t, func(int) []byte { return []byte(raw) })
			proxy := &url.URL{Scheme: "http", Host: addr}
			full, cause := attack60DialErr(t, "https://rta.example:443", &http.Transport{Proxy: http.ProxyURL(proxy)})
			t.Logf("told %q", cause)
			if strings.Contains(full+cause, "ATK174ECHO") {
				t.Errorf("the proxy's text reached the error: %q", full)
			}
		})
	}
}
