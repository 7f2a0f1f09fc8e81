package tlsca_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/mock/tlsca"
)

func attackCA(t *testing.T) *tlsca.CA {
	t.Helper()
	ca, err := tlsca.New()
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

func attackParse(t *testing.T, b []byte) []*x509.Certificate {
	t.Helper()
	var out []*x509.Certificate
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			return out
		}
		c, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
}

// attackLeaf is the certificate TLSConfig presents to a client naming sni.
func attackLeaf(t *testing.T, cfg *tls.Config, sni string) (*tls.Certificate, error) {
	t.Helper()
	return cfg.GetCertificate(&tls.ClientHelloInfo{ServerName: sni})
}

// The doc of tlsca.Partner said: "NotBefore and NotAfter bound its
// validity; ... within the CA's own validity either way", and a Partner
// whose NotBefore came before the CA's was issued as given. Held to the
// CA's, a test could not make an expired partner certificate with a CA
// made at start (TestAttackHandshakes does); the doc now says NotAfter is
// held within the CA's validity and NotBefore taken as given, which this
// checks.
func TestAttackPartnerWithinCAValidity(t *testing.T) {
	ca := attackCA(t)
	certPEM, _, err := ca.IssuePartner(tlsca.Partner{Name: "atk-service", NotBefore: ca.Cert.NotBefore.Add(-48 * time.Hour), NotAfter: ca.Cert.NotAfter.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	leaf := attackParse(t, certPEM)[0]
	if !leaf.NotBefore.Equal(ca.Cert.NotBefore.Add(-48*time.Hour).Truncate(time.Second)) || leaf.NotAfter.After(ca.Cert.NotAfter) {
		t.Errorf("partner certificate valid %s to %s; want from the NotBefore given to at most its CA's %s",
			leaf.NotBefore.UTC().Format(time.RFC3339), leaf.NotAfter.UTC().Format(time.RFC3339), ca.Cert.NotAfter.UTC().Format(time.RFC3339))
	}
}

// held: tlsca's doc: the CA "signs one leaf certificate naming every
// host a mock answers (mock.Handler.Hosts), so that a client that trusts
// it reaches the mock at the services' real names over HTTPS, however it
// was written"; TLSConfig's leaf names the hosts ("patterns whose first
// label is or ends with '*' ... become "*.<rest>""), localhost, 127.0.0.1
// and ::1; a leaf is "valid for at most a year within" the CA.
//
// TestAttackLeafStrict: Go's crypto/x509 with default verification (server
// auth) accepts the leaf for every host the default mock answers (a
// pattern through a name it matches), localhost and both loopback
// addresses; the leaf is no CA (a certificate its key signs does not
// verify), has a P-256 key, server auth only, a year at most; the CA
// bounds its path length to 0. openssl verify -x509_strict -purpose
// sslserver accepts the chain.
func TestAttackLeafStrict(t *testing.T) {
	ca := attackCA(t)
	hosts := mock.NewHandler().Hosts()
	cfg, err := ca.TLSConfig(hosts)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := attackLeaf(t, cfg, "profile.xboxlive.com")
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	verify := func(c *x509.Certificate, name string, inter *x509.CertPool) error {
		_, err := c.Verify(x509.VerifyOptions{DNSName: name, Roots: ca.Pool(), Intermediates: inter})
		return err
	}
	names := []string{"localhost", "127.0.0.1", "::1"}
	for _, h := range hosts {
		names = append(names, strings.ReplaceAll(h, "*", "atk"))
	}
	for _, n := range names {
		if err := verify(leaf, n, nil); err != nil {
			t.Errorf("leaf for %q: %v", n, err)
		}
	}
	for _, n := range []string{"bank.example.com", "xboxlive.com", "a.b.xboxlive.com", "microsoft.com", "evil.live.com", "10.0.0.1"} {
		if err := verify(leaf, n, nil); err == nil {
			t.Errorf("leaf verifies for %q, a name no host of the mock's matches", n)
		}
	}
	if leaf.IsCA || leaf.BasicConstraintsValid && leaf.IsCA || leaf.KeyUsage&x509.KeyUsageCertSign != 0 {
		t.Errorf("leaf may sign certificates: IsCA %v, key usage %v", leaf.IsCA, leaf.KeyUsage)
	}
	if k, ok := leaf.PublicKey.(*ecdsa.PublicKey); !ok || k.Curve != elliptic.P256() {
		t.Errorf("leaf key %T", leaf.PublicKey)
	}
	if len(leaf.ExtKeyUsage) != 1 || leaf.ExtKeyUsage[0] != x509.ExtKeyUsageServerAuth {
		t.Errorf("leaf extended key usage %v", leaf.ExtKeyUsage)
	}
	if life := leaf.NotAfter.Sub(leaf.NotBefore); life > 366*24*time.Hour {
		t.Errorf("leaf valid for %v", life)
	}
	if !ca.Cert.MaxPathLenZero || ca.Cert.MaxPathLen != 0 {
		t.Errorf("CA path length %d (zero %v)", ca.Cert.MaxPathLen, ca.Cert.MaxPathLenZero)
	}
	// A certificate the leaf's key signs, for a bank.
	evilKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "bank.example.com"}, DNSNames: []string{"bank.example.com"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, leaf, &evilKey.PublicKey, cert.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	evil, _ := x509.ParseCertificate(der)
	inter := x509.NewCertPool()
	inter.AddCert(leaf)
	if err := verify(evil, "bank.example.com", inter); err == nil {
		t.Error("a certificate signed by the leaf's key verifies")
	}

	openssl, err := exec.LookPath("openssl")
	if err != nil {
		t.Log("openssl not found: its check skipped")
		return
	}
	dir := t.TempDir()
	caFile, leafFile := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "leaf.pem")
	os.WriteFile(caFile, ca.CertPEM(), 0o600)
	os.WriteFile(leafFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]}), 0o600)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, args := range [][]string{
		{"verify", "-x509_strict", "-purpose", "sslserver", "-CAfile", caFile, leafFile},
		{"verify", "-x509_strict", "-purpose", "sslserver", "-verify_hostname", "profile.xboxlive.com", "-CAfile", caFile, leafFile},
		{"verify", "-x509_strict", "-purpose", "sslserver", "-verify_ip", "127.0.0.1", "-CAfile", caFile, leafFile},
	} {
		out, err := exec.CommandContext(ctx, openssl, args...).CombinedOutput()
		if err != nil || !strings.Contains(string(out), ": OK") {
			t.Errorf("openssl %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	out, _ := exec.CommandContext(ctx, openssl, "verify", "-x509_strict", "-purpose", "sslserver", "-verify_hostname", "bank.example.com", "-CAfile", caFile, leafFile).CombinedOutput()
	if strings.Contains(string(out), ": OK") {
		t.Errorf("openssl accepts the leaf for bank.example.com: %s", out)
	}
}

// held: TLSConfig's doc: "A client that names another host (SNI) is
// refused in the handshake ... A client certificate is not asked for, but
// one given must be ca's (IssuePartner) and current, or the handshake
// fails."
//
// TestAttackHandshakes: over a real loopback TLS listener, a client naming
// bank.example.com is refused; a client certificate of another CA, the
// mock's own server leaf offered as a client certificate (signed by ca,
// but for server auth), and an expired partner certificate of ca each fail
// the handshake; a current partner certificate and no certificate pass.
func TestAttackHandshakes(t *testing.T) {
	ca := attackCA(t)
	cfg, err := ca.TLSConfig(mock.NewHandler().Hosts())
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				if c.(*tls.Conn).Handshake() == nil {
					c.Write([]byte("x"))
				}
			}()
		}
	}()
	defer func() { ln.Close(); <-done }()

	// dial presents certs' first certificate whatever CAs the server names:
	// Go's client sends none whose issuer is not among them, and the
	// server then takes a client without one. (Two CAs made in the same
	// second share their name, so a chain of the other CA's was sent only
	// when the test did not cross a second: it failed about 1 run in 100.)
	dial := func(sni string, certs []tls.Certificate) error {
		d := &net.Dialer{Timeout: 5 * time.Second}
		conf := &tls.Config{ServerName: sni, RootCAs: ca.Pool()}
		if len(certs) > 0 {
			conf.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &certs[0], nil }
		}
		c, err := tls.DialWithDialer(d, "tcp", ln.Addr().String(), conf)
		if err != nil {
			return err
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		b := make([]byte, 1)
		_, err = c.Read(b) // TLS 1.3: a refused client certificate shows after the client's handshake
		return err
	}
	pair := func(certPEM, keyPEM []byte) []tls.Certificate {
		c, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			t.Fatal(err)
		}
		return []tls.Certificate{c}
	}
	if err := dial("profile.xboxlive.com", nil); err != nil {
		t.Errorf("no client certificate: %v", err)
	}
	if err := dial("bank.example.com", nil); err == nil {
		t.Error("a client naming bank.example.com was served")
	}
	good, goodKey, err := ca.IssuePartner(tlsca.Partner{Name: "atk-service"})
	if err != nil {
		t.Fatal(err)
	}
	if err := dial("service.auth.xboxlive.com", pair(good, goodKey)); err != nil {
		t.Errorf("a current partner certificate: %v", err)
	}
	old, oldKey, err := ca.IssuePartner(tlsca.Partner{Name: "atk-service", NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if err := dial("service.auth.xboxlive.com", pair(old, oldKey)); err == nil {
		t.Error("an expired partner certificate was taken")
	}
	other := attackCA(t)
	alien, alienKey, err := other.IssuePartner(tlsca.Partner{Name: "atk-service"})
	if err != nil {
		t.Fatal(err)
	}
	if err := dial("service.auth.xboxlive.com", pair(alien, alienKey)); err == nil {
		t.Error("another CA's partner certificate was taken")
	}
	server, err := attackLeaf(t, cfg, "profile.xboxlive.com")
	if err != nil {
		t.Fatal(err)
	}
	if err := dial("service.auth.xboxlive.com", []tls.Certificate{*server}); err == nil {
		t.Error("the mock's server certificate was taken as a client's")
	}
}

// tlsca's caLife comment and TLSConfig's doc: "a leaf is valid for at
// most a year within" its CA; TLSConfig "returns a server configuration
// that presents one leaf certificate, signed by ca"; Load reads a CA "so
// that clients' trust outlives a run". IssuePartner refuses to sign what
// cannot be valid ("NotAfter must come after its NotBefore").
//
// TestAttackExpiredCALeaf: Load takes a CA whose validity ended yesterday
// (a CA kept from an earlier run, past its date), and TLSConfig returns
// no error: it presents a leaf whose NotAfter (the CA's) comes before its
// NotBefore (an hour ago), a certificate that is never valid, which every
// client then refuses. Load or TLSConfig should say so.
func TestAttackExpiredCALeaf(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	now := time.Now()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "atk expired CA"},
		NotBefore: now.Add(-72 * time.Hour), NotAfter: now.Add(-24 * time.Hour),
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, BasicConstraintsValid: true, IsCA: true, MaxPathLenZero: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	k, _ := x509.MarshalPKCS8PrivateKey(key)
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "ca-key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: k}), 0o600)
	ca, err := tlsca.Load(certFile, keyFile)
	if err != nil {
		t.Logf("held: Load refused it: %v", err)
		return
	}
	cfg, err := ca.TLSConfig([]string{"profile.xboxlive.com"})
	if err != nil {
		t.Logf("held: TLSConfig refused it: %v", err)
		return
	}
	cert, err := attackLeaf(t, cfg, "profile.xboxlive.com")
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(cert.Certificate[0])
	if !leaf.NotAfter.After(leaf.NotBefore) || now.After(leaf.NotAfter) {
		t.Errorf("an expired CA loaded and used without error: its leaf is valid from %s to %s",
			leaf.NotBefore.UTC().Format(time.RFC3339), leaf.NotAfter.UTC().Format(time.RFC3339))
	}
}
