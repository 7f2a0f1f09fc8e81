package tlsca

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoad: a CA written out loads back as the same CA; a key other users
// may read, a certificate that is not a CA's and garbage are refused with
// errors that say so.
func TestLoad(t *testing.T) {
	dir := t.TempDir()
	ca, err := New()
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
	back, err := Load(cert, key)
	if err != nil || !back.Cert.Equal(ca.Cert) {
		t.Fatalf("Load: %v", err)
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
			if _, err := Load(tt.cert, tt.key); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Load = %v, want an error saying %q", err, tt.want)
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
