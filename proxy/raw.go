package proxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/xblgo/fgrl/internal/safetext"
)

// dialTimeout bounds the opening of a tunnel to another host.
const dialTimeout = 10 * time.Second

// errNotPublic is dialPublic's refusal of an address.
var errNotPublic = errors.New("not a public address (loopback, private, shared, link-local, multicast, reserved or unspecified)")

// dialPublic dials addr, refusing every address that is not public: the
// check runs on each address the name resolves to, just before connecting
// to it, so a name that resolves to a private address reaches nothing.
func dialPublic(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{ControlContext: func(_ context.Context, _, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil || !public(ap.Addr().Unmap()) {
			return errNotPublic
		}
		return nil
	}}
	return d.DialContext(ctx, network, addr)
}

// public reports whether ip is an address of the internet at large.
func public(ip netip.Addr) bool {
	ip = ip.Unmap() // an IPv4-mapped address is its IPv4 address
	if !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsUnspecified() ||
		ip.IsMulticast() || ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast() {
		return false
	}
	for _, p := range notPublic {
		if p.Contains(ip) {
			return false
		}
	}
	if sixToFour.Contains(ip) { // 6to4: a relay reaches the IPv4 address it embeds
		b := ip.As16()
		return public(netip.AddrFrom4([4]byte(b[2:6])))
	}
	return true
}

// sixToFour is 6to4's prefix (RFC 3056), whose addresses embed an IPv4
// one in their bits 16 to 47.
var sixToFour = netip.MustParsePrefix("2002::/16")

// notPublic are the special-purpose ranges (IANA's registries, RFC 6890)
// that net/netip's checks leave out and that reach a network's or a
// machine's own services, or another address by translation: the
// "this network" block, carrier-grade NAT's shared space (RFC 6598: cloud
// metadata services live there), the IETF protocol assignments, the
// benchmarking range (which local fake-IP resolvers hand out), the
// reserved class E and broadcast; in IPv6, NAT64 and the IPv4-translated
// form (which reach any IPv4 address through a translator), Teredo (which
// embeds its client's address and reaches it through a relay), the
// IPv4-compatible form, the discard prefix and the deprecated site-local
// one. 6to4 is checked by the IPv4 address it embeds (public).
var notPublic = func() []netip.Prefix {
	var ps []netip.Prefix
	for _, s := range []string{"0.0.0.0/8", "100.64.0.0/10", "192.0.0.0/24", "198.18.0.0/15", "240.0.0.0/4",
		"64:ff9b::/96", "64:ff9b:1::/48", "::ffff:0:0:0/96", "2001::/32", "::/96", "100::/64", "fec0::/10"} {
		ps = append(ps, netip.MustParsePrefix(s))
	}
	return ps
}()

// tunnelRaw tunnels a CONNECT to another host untouched: the bytes go both
// ways as they come, never read as TLS or HTTP. The tunnel closes when
// either side does, when neither sends a byte for the idle timeout, or when
// the proxy stops.
func (s *Server) tunnelRaw(w http.ResponseWriter, r *http.Request, addr string) {
	ctx, cancel := context.WithTimeout(r.Context(), dialTimeout)
	up, err := s.cfg.Dial(ctx, "tcp", addr)
	cancel()
	if err != nil {
		status := http.StatusBadGateway
		if errors.Is(err, errNotPublic) {
			status = http.StatusForbidden
		}
		s.refuseConnect(w, r, status, fmt.Sprintf("cannot tunnel to %s: %s", safetext.Quote(addr, 100), safetext.Clip(dialReason(err), 200)))
		return
	}
	down, ok := hijack(w)
	if !ok {
		up.Close()
		return
	}
	if !s.track(up, down) {
		up.Close()
		down.Close()
		return
	}
	s.stats.add(&s.stats.tunnelled)
	go func() {
		splice(up, down, s.idle)
		s.untrack(up, down)
	}()
}

// dialReason is what a failed dial says, without the address net.OpError
// repeats.
func dialReason(err error) string {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		err = oe.Err
	}
	var se *os.SyscallError
	if errors.As(err, &se) {
		err = se.Err
	}
	return err.Error()
}

// track records a raw tunnel's connections, so that Close ends them; false
// once the proxy is closed.
func (s *Server) track(cs ...net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	for _, c := range cs {
		s.raw[c] = struct{}{}
	}
	return true
}

func (s *Server) untrack(cs ...net.Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range cs {
		delete(s.raw, c)
	}
}

// splice copies a to b and b to a until either ends, neither side sends a
// byte for idle, or one takes no byte for idle; then it closes both.
func splice(a, b net.Conn, idle time.Duration) {
	var last atomic.Int64 // the last byte's time, either way, in Unix nanoseconds
	last.Store(time.Now().UnixNano())
	done := make(chan struct{}, 2)
	pump := func(dst, src net.Conn) {
		defer func() { done <- struct{}{} }()
		buf := make([]byte, 32<<10)
		for {
			src.SetReadDeadline(time.Unix(0, last.Load()).Add(idle))
			n, err := src.Read(buf)
			if n > 0 {
				last.Store(time.Now().UnixNano())
				dst.SetWriteDeadline(time.Now().Add(idle)) // a peer that stops reading ends the tunnel too
				if _, werr := dst.Write(buf[:n]); werr != nil {
					return
				}
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() && time.Since(time.Unix(0, last.Load())) < idle {
				continue // the other way was busy: not idle yet
			}
			if err != nil {
				return
			}
		}
	}
	go pump(a, b)
	go pump(b, a)
	<-done
	a.Close()
	b.Close()
	<-done
}
