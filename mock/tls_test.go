package mock

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTLSServer: a client that trusts the CA reaches every exact host the
// mock answers at its real name over HTTPS, hosts of a pattern included,
// and a service answers as over plain HTTP.
func TestTLSServer(t *testing.T) {
	s := NewTLSServer(nil)
	defer s.Close()
	u, _ := url.Parse(s.URL)
	hosts := s.Handler.Hosts()
	for _, want := range []string{"profile.xboxlive.com", "login.live.com", "user.auth.xboxlive.com", "xsts.auth.xboxlive.com", "club*.xboxlive.com"} {
		if !contains(hosts, want) {
			t.Errorf("Hosts() lacks %s: %v", want, hosts)
		}
	}
	for _, h := range append(hosts, "clubhub.xboxlive.com") {
		if strings.Contains(h, "*") {
			continue
		}
		conn, err := tls.Dial("tcp", u.Host, &tls.Config{ServerName: h, RootCAs: s.CA.Pool()})
		if err != nil {
			t.Errorf("%s: %v", h, err)
			continue
		}
		conn.Close()
	}
	req, _ := http.NewRequest("GET", "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag", nil)
	req.Header.Set("Authorization", Token(xuid1, title1))
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), "Gamertag") || resp.TLS == nil {
		t.Errorf("profile over TLS: %d %s", resp.StatusCode, b)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestTLSRefusals: a host the mock does not serve (SNI) is refused in the
// handshake with an error naming it, and a client that does not trust the
// CA refuses the mock.
func TestTLSRefusals(t *testing.T) {
	s := NewTLSServer(nil)
	defer s.Close()
	u, _ := url.Parse(s.URL)
	_, err := tls.Dial("tcp", u.Host, &tls.Config{ServerName: "bank.example.com", RootCAs: s.CA.Pool()})
	if err == nil {
		t.Error("a handshake for bank.example.com succeeded")
	}
	plain := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, u.Host)
	}}}
	_, err = plain.Get("https://profile.xboxlive.com/")
	var unknown *tls.CertificateVerificationError
	if !errors.As(err, &unknown) {
		t.Errorf("a client without the CA: %v, want a certificate verification error", err)
	}
}

// TestLoadCA: a CA written out loads back as the same CA; a key other users
// may read, a certificate that is not a CA's and garbage are refused with
// errors that say so.
func TestLoadCA(t *testing.T) {
	dir := t.TempDir()
	ca, err := NewCA()
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, err := ca.KeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, mode)
		return p
	}
	cert, key := write("ca.pem", ca.CertPEM(), 0o644), write("ca-key.pem", keyPEM, 0o600)
	back, err := LoadCA(cert, key)
	if err != nil || !back.Cert.Equal(ca.Cert) {
		t.Fatalf("LoadCA: %v", err)
	}
	if _, err := back.TLSConfig([]string{"profile.xboxlive.com"}); err != nil {
		t.Errorf("a loaded CA cannot sign: %v", err)
	}
	leaf, _ := back.leaf([]string{"profile.xboxlive.com"})
	leafPEM := pemOf(leaf.Certificate[0])
	tests := []struct {
		name, cert, key, want string
	}{
		{"key readable by others", cert, write("open-key.pem", keyPEM, 0o644), "readable by other users"},
		{"not a CA", write("leaf.pem", leafPEM, 0o644), write("leaf-key.pem", mustKeyPEM(t, leaf), 0o600), "not a CA's"},
		{"garbage", write("junk.pem", []byte("junk"), 0o644), key, "CA"},
		{"missing key", cert, filepath.Join(dir, "nope.pem"), "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := LoadCA(tt.cert, tt.key); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("LoadCA = %v, want an error saying %q", err, tt.want)
			}
		})
	}
}

func pemOf(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func mustKeyPEM(t *testing.T, c *tls.Certificate) []byte {
	der, err := x509.MarshalPKCS8PrivateKey(c.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}
