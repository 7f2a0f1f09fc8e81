package tlsca_test

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/mock/tlsca"
)

func attack68LeafOf(t *testing.T, ca *tlsca.CA, hosts []string) *x509.Certificate {
	t.Helper()
	cfg, err := ca.TLSConfig(hosts)
	if err != nil {
		t.Fatal(err)
	}
	c, err := cfg.GetCertificate(&tls.ClientHelloInfo{})
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(c.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	return leaf
}

// BREAK: TLSConfig's doc: the leaf names "hosts (names, and patterns whose
// first label is or ends with '*', which become "*.<rest>")". A pattern
// whose '*' is inside its first label ("a*b.example.com": neither a
// name, nor a first label that is or ends with '*') is also widened to
// "*.example.com", so the mock's certificate vouches for every name of
// the domain (bank.example.com) and the SNI check, which tests names
// against that leaf, serves them; a leading-'*' label ("*x.example.net")
// the same.
func TestAttack68MidLabelStarNotWidened(t *testing.T) {
	ca, err := tlsca.New()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ pattern, other string }{
		{"a*b.example.com", "bank.example.com"},
		{"*x.example.net", "bank.example.net"},
	} {
		leaf := attack68LeafOf(t, ca, []string{c.pattern})
		if err := leaf.VerifyHostname(c.other); err == nil {
			t.Errorf("TLSConfig([%q]) names %v: it vouches for %s, which the pattern cannot match", c.pattern, leaf.DNSNames, c.other)
		}
	}
}

// held: the leaf for the default mock's hosts names only those hosts
// (patterns by their domain), localhost, and the IP addresses 127.0.0.1
// and ::1: no other IP SAN, no wildcard but those h.Hosts' patterns give,
// no name outside the hosts.
func TestAttack68LeafNamesOnlyHosts(t *testing.T) {
	ca, err := tlsca.New()
	if err != nil {
		t.Fatal(err)
	}
	hosts := mock.NewHandler().Hosts()
	leaf := attack68LeafOf(t, ca, hosts)
	allowed := map[string]bool{"localhost": true}
	for _, h := range hosts {
		h = strings.ToLower(h)
		if i := strings.IndexByte(h, '.'); strings.Contains(h[:max(i, 0)], "*") {
			h = "*" + h[i:]
		}
		allowed[h] = true
	}
	for _, n := range leaf.DNSNames {
		if !allowed[n] {
			t.Errorf("the leaf names %q, no host of h.Hosts()", n)
		}
		if strings.HasPrefix(n, "*.") && strings.Count(n, ".") < 2 {
			t.Errorf("the leaf names a whole top-level domain: %q", n)
		}
	}
	if len(leaf.IPAddresses) != 2 || !leaf.IPAddresses[0].Equal(net.IPv4(127, 0, 0, 1)) || !leaf.IPAddresses[1].Equal(net.IPv6loopback) {
		t.Errorf("leaf IP SANs %v, want 127.0.0.1 and ::1", leaf.IPAddresses)
	}
	if len(leaf.URIs) != 0 || len(leaf.EmailAddresses) != 0 {
		t.Errorf("leaf URIs %v emails %v", leaf.URIs, leaf.EmailAddresses)
	}
}

// held: a Business Partner Certificate "the client certificate a title's
// service presents": whoever holds its key (IssuePartner: "Whoever holds
// the key signs in as the service") cannot serve it as
// profile.xboxlive.com to clients that trust the CA, even when its Name
// is that host, nor sign a certificate they believe.
func TestAttack68PartnerCertNotAServer(t *testing.T) {
	ca, err := tlsca.New()
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := ca.IssuePartner(tlsca.Partner{Name: "profile.xboxlive.com"})
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{pair}})
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
	defer func() { ln.Close(); <-done }()
	for _, sni := range []string{"profile.xboxlive.com", "localhost"} {
		c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", ln.Addr().String(),
			&tls.Config{ServerName: sni, RootCAs: ca.Pool()})
		if err == nil {
			c.Close()
			t.Errorf("a partner certificate named %q served %s to a client trusting the CA", "profile.xboxlive.com", sni)
		}
	}
	leaf, _ := x509.ParseCertificate(pair.Certificate[0])
	if leaf.IsCA || len(leaf.DNSNames) != 0 || len(leaf.IPAddresses) != 0 ||
		!slices.Equal(leaf.ExtKeyUsage, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}) {
		t.Errorf("partner certificate: CA %v, DNS %v, IPs %v, EKU %v", leaf.IsCA, leaf.DNSNames, leaf.IPAddresses, leaf.ExtKeyUsage)
	}
	if !bytes.Contains(keyPEM, []byte("PRIVATE KEY")) || bytes.Contains(certPEM, []byte("PRIVATE KEY")) {
		t.Error("the certificate PEM holds a key, or the key PEM none")
	}
	caKey, _ := ca.KeyPEM()
	caDER, _ := pem.Decode(caKey)
	if bytes.Contains(certPEM, caDER.Bytes) || bytes.Contains(keyPEM, caDER.Bytes) {
		t.Error("the CA's key reached a partner's files")
	}
}

// held: Load: "A key file that other users may read is refused": a key
// readable by its group (0640), by others (0604), or reached through a
// symlink to such a file; the refusal quotes neither key's bytes.
func TestAttack68LoadRefusesReadableKeys(t *testing.T) {
	ca, err := tlsca.New()
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, err := ca.KeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(certFile, ca.CertPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(keyPEM)
	for _, mode := range []os.FileMode{0o640, 0o604, 0o644, 0o660} {
		keyFile := filepath.Join(dir, "key-"+mode.String())
		if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chmod(keyFile, mode)
		for _, f := range []string{keyFile, keyFile + ".link"} {
			if f != keyFile {
				os.Symlink(keyFile, f)
			}
			_, err := tlsca.Load(certFile, f)
			if err == nil {
				t.Errorf("Load took a key file of mode %v (%s)", mode, filepath.Base(f))
				continue
			}
			if strings.Contains(err.Error(), string(keyPEM[30:60])) || strings.Contains(err.Error(), string(blk.Bytes[:8])) {
				t.Errorf("the refusal quotes the key: %v", err)
			}
		}
	}
	keyFile := filepath.Join(dir, "key-ok")
	os.WriteFile(keyFile, keyPEM, 0o600)
	got, err := tlsca.Load(certFile, keyFile)
	if err != nil {
		t.Fatalf("Load of a 0600 key: %v", err)
	}
	if !got.Cert.Equal(ca.Cert) {
		t.Error("Load read another CA")
	}
}
