package proxy

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/xblgo/fgrl/internal/adminaccess"
	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/internal/tunnel"
)

// connect answers CONNECT: a tunnel to an Xbox host is decrypted with the
// proxy's TLS and its requests served by the inner server; one to another
// host is tunnelled untouched (TunnelOthers) or refused.
func (s *Server) connect(w http.ResponseWriter, r *http.Request) {
	if status, why := s.admitProxy(r); status != 0 {
		s.refuseConnect(w, r, status, why)
		return
	}
	host, port, ok := hostPort(r.Host)
	host = hostName(host)
	switch {
	case !ok:
		s.refuseConnect(w, r, http.StatusBadRequest, fmt.Sprintf("%s is not a host, or a host and a port", safetext.Quote(r.Host, 100)))
	case port != "443":
		s.refuseConnect(w, r, http.StatusForbidden, fmt.Sprintf("the proxy tunnels HTTPS (port 443) only, not port %s of %s",
			safetext.Quote(port, 8), safetext.Quote(host, 100)))
	case s.xbox(host):
		s.tunnel(w, r, host)
	case s.cfg.TunnelOthers:
		s.tunnelRaw(w, r, net.JoinHostPort(host, port))
	default:
		s.refuseConnect(w, r, http.StatusForbidden, fmt.Sprintf("%s is not a host of the proxy's limits data: it serves the Xbox services "+
			"only, and opens no connection elsewhere (xblcall proxy --tunnel-others tunnels other hosts untouched)", safetext.Quote(host, 100)))
	}
}

// hostName is a host as the proxy compares them: lower case, without a
// trailing dot.
func hostName(h string) string { return strings.TrimSuffix(strings.ToLower(h), ".") }

// refuseConnect answers a CONNECT it will not serve, and logs it.
func (s *Server) refuseConnect(w http.ResponseWriter, r *http.Request, status int, why string) {
	s.stats.add(&s.stats.tunnelsRefused)
	if s.cfg.Logger != nil {
		s.cfg.Logger.Warn("proxy: CONNECT refused", "peer", r.RemoteAddr, "status", status, "reason", why)
	}
	if status == http.StatusProxyAuthRequired {
		w.Header().Set("Proxy-Authenticate", `Basic realm="xblcall proxy"`)
	}
	plain(w, r, status, "proxy: "+why)
}

// absolute serves a plain HTTP request in absolute form (GET
// https://host/path HTTP/1.1) as a tunnelled one: to loopback peers only,
// since its token came in clear; https and an Xbox host only.
func (s *Server) absolute(w http.ResponseWriter, r *http.Request) {
	host, port := r.URL.Hostname(), r.URL.Port()
	host = hostName(host)
	switch {
	case !adminaccess.LoopbackPeer(r.RemoteAddr):
		plain(w, r, http.StatusForbidden, "proxy: a request in plain HTTP carries its token in clear: from off this machine, send HTTPS through CONNECT")
	case r.URL.Scheme != "https":
		plain(w, r, http.StatusForbidden, "proxy: the proxy calls the Xbox services over HTTPS only: ask for https://"+safetext.Clip(r.URL.Host, 100)+"/...")
	case port != "" && port != "443" || !s.xbox(host):
		plain(w, r, http.StatusForbidden, "proxy: "+safetext.Quote(r.URL.Host, 100)+" is not a host of the proxy's limits data: it serves the Xbox services only")
	default:
		s.forward(w, r, host)
	}
}

// tunnel takes the connection over, answers 200 and hands it to the inner
// server, which decrypts it with the proxy's TLS for host alone.
func (s *Server) tunnel(w http.ResponseWriter, r *http.Request, host string) {
	conn, ok := hijack(w)
	if !ok {
		return
	}
	if !s.tunnels.Push(&tunnelConn{Conn: conn, host: host}) {
		conn.Close()
	}
}

// hijack takes the connection of a CONNECT over, answers 200 on it, and
// returns it reading first what the server had buffered; false when it
// could not (an answer has then been written, or the peer is gone).
func hijack(w http.ResponseWriter) (net.Conn, bool) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		plain(w, nil, http.StatusHTTPVersionNotSupported, "proxy: CONNECT needs HTTP/1.1")
		return nil, false
	}
	conn, rw, err := hj.Hijack()
	if err != nil {
		return nil, false
	}
	if _, err := io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		conn.Close()
		return nil, false
	}
	return tunnel.Buffered(conn, rw.Reader), true // the client may have spoken before the 200
}

// tunnelConn is a decrypted tunnel's connection, knowing its host: the TLS
// handshake (tunnelTLS) and every request (serveTunnelled) must name it.
type tunnelConn struct {
	net.Conn
	host string
}

// CloseWrite half-closes the connection when it can, as http.Server does
// before closing one whose request it did not read whole.
func (c *tunnelConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// tunnelKey is the context key of a decrypted tunnel's host.
type tunnelKey struct{}

// tunnelContext is the inner server's ConnContext: it gives each request
// its tunnel's host.
func tunnelContext(ctx context.Context, c net.Conn) context.Context {
	if tc, ok := c.(*tls.Conn); ok {
		if t, ok := tc.NetConn().(*tunnelConn); ok {
			return context.WithValue(ctx, tunnelKey{}, t.host)
		}
	}
	return ctx
}

// tunnelTLS returns base refusing a handshake whose SNI is not the
// tunnel's host. The check is made where every ClientHello is read
// (GetConfigForClient), a resumed session's too, which never asks for a
// certificate.
func (s *Server) tunnelTLS(base *tls.Config) *tls.Config {
	c := base.Clone()
	c.GetConfigForClient = func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
		t, _ := hello.Conn.(*tunnelConn)
		if sni := hostName(hello.ServerName); t == nil || sni != t.host {
			s.stats.add(&s.stats.misdirected)
			tunnelled := ""
			if t != nil {
				tunnelled = t.host
			}
			return nil, fmt.Errorf("proxy: a TLS handshake for %s in a tunnel to %s", safetext.Quote(sni, 100), safetext.Quote(tunnelled, 100))
		}
		return nil, nil // c itself
	}
	return c
}

// hostPort splits a request's host into host and port, the port 443 when
// it names none; ok is false for one that is neither (a colon net cannot
// split, as in "a.xboxlive.com:8080.xboxlive.com:22", which names port 22
// behind a host a glob of the limits data could match).
func hostPort(s string) (host, port string, ok bool) {
	if h, p, err := net.SplitHostPort(s); err == nil {
		return h, p, true
	}
	if strings.Contains(s, ":") {
		return "", "", false
	}
	return s, "443", true
}

// serveTunnelled serves a request of a decrypted tunnel: for the tunnel's
// host alone.
func (s *Server) serveTunnelled(w http.ResponseWriter, r *http.Request) {
	host, _ := r.Context().Value(tunnelKey{}).(string)
	asked, port, ok := hostPort(r.Host)
	if !ok || host == "" || hostName(asked) != host || port != "443" {
		s.stats.add(&s.stats.misdirected)
		plain(w, r, http.StatusMisdirectedRequest, fmt.Sprintf("proxy: a request for %s in a tunnel to %s: open a tunnel to each host",
			safetext.Quote(r.Host, 100), safetext.Quote(host, 100)))
		return
	}
	s.forward(w, r, host)
}

// tunnelAddr is the address of the decrypted tunnels' listener.
type tunnelAddr struct{}

func (tunnelAddr) Network() string { return "tunnel" }
func (tunnelAddr) String() string  { return "tunnels" }
