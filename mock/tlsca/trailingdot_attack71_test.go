package tlsca_test

import (
	"crypto/tls"
	"net"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock/tlsca"
)

// attack71Serve serves TLSConfig(hosts) on loopback and returns its address.
func attack71Serve(t *testing.T, ca *tlsca.CA, hosts []string) string {
	t.Helper()
	cfg, err := ca.TLSConfig(hosts)
	if err != nil {
		t.Fatalf("TLSConfig(%q): %v", hosts, err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.SetDeadline(time.Now().Add(5 * time.Second))
			c.(*tls.Conn).Handshake()
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return ln.Addr().String()
}

func attack71Dial(ca *tlsca.CA, addr, name string) error {
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, &tls.Config{ServerName: name, RootCAs: ca.Pool()})
	if err == nil {
		c.Close()
	}
	return err
}

// TestAttack71LeafTrailingDotHost: a host given in its fully qualified form
// ("Mock.Example.", as adminaccess now takes one: "a host given with its
// trailing dot is the same name"), or a pattern so given
// ("club*.Example.com."), is written into the leaf with its dot
// ("mock.example.", "*.example.com."), which no client's name matches:
// a client asking for mock.example (or mock.example., or
// club1.example.com) is refused in the handshake.
//
// Promised (CA.TLSConfig): "presents one leaf certificate, signed by ca,
// naming hosts (names, and patterns whose first label is or ends with
// '*', which become "*.<rest>" ...)"; "A client that names another host
// (SNI) is refused".
func TestAttack71LeafTrailingDotHost(t *testing.T) {
	ca, err := tlsca.New()
	if err != nil {
		t.Fatal(err)
	}
	addr := attack71Serve(t, ca, []string{"Mock.Example.", "club*.Example.com."})
	for _, name := range []string{"mock.example", "MOCK.example", "mock.example.", "club1.example.com", "club1.example.com."} {
		if err := attack71Dial(ca, addr, name); err != nil {
			t.Errorf("hosts [Mock.Example. club*.Example.com.], client naming %q: %v", name, err)
		}
	}
}

// held: hosts given in any case, without a dot, are named by the leaf
// and served to a client naming them in any case or with a trailing dot;
// a pattern widens to its domain's first level only; a name outside
// the hosts is refused. Promised (CA.TLSConfig), as above.
func TestAttack71LeafCaseAndDots(t *testing.T) {
	ca, err := tlsca.New()
	if err != nil {
		t.Fatal(err)
	}
	addr := attack71Serve(t, ca, []string{"Mock.Example", "CLUB*.example.COM"})
	for _, name := range []string{"mock.example", "MOCK.EXAMPLE", "mock.example.", "club9.example.com", "Club9.Example.Com.", "localhost", "localhost."} {
		if err := attack71Dial(ca, addr, name); err != nil {
			t.Errorf("client naming %q: %v", name, err)
		}
	}
	for _, name := range []string{"evil.mock.example", "a.b.example.com", "example.com", "mock.example.evil", "mock.example.."} {
		if err := attack71Dial(ca, addr, name); err == nil {
			t.Errorf("client naming %q served", name)
		}
	}
}

// TestAttack71LeafDoubleStarLabel: a pattern whose first label ends with '*'
// but holds two ("**.example.com", "a**.example.com") is left out of the
// leaf, where the doc says such a label becomes "*.<rest>".
//
// Promised (CA.TLSConfig): "patterns whose first label is or ends with
// '*', which become "*.<rest>"; other patterns are left out".
func TestAttack71LeafDoubleStarLabel(t *testing.T) {
	ca, err := tlsca.New()
	if err != nil {
		t.Fatal(err)
	}
	addr := attack71Serve(t, ca, []string{"**.example.com", "a**.example.net"})
	for _, name := range []string{"x.example.com", "ab.example.net"} {
		if err := attack71Dial(ca, addr, name); err != nil {
			t.Errorf("hosts [**.example.com a**.example.net], client naming %q: %v", name, err)
		}
	}
}
