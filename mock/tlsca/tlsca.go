// Package tlsca is the certificate authority of the mock's TLS: it signs
// one leaf certificate naming every host a mock answers (mock.Handler.Hosts),
// so that a client that trusts it reaches the mock at the services' real
// names over HTTPS, however it was written. mock.NewTLSServer and xblcall
// mock --https use it.
package tlsca

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/xblgo/fgrl/internal/safetext"
)

// CA is a certificate authority of the mock's TLS. Its key stays in the
// process unless KeyPEM is called.
type CA struct {
	Cert *x509.Certificate
	key  crypto.Signer
}

// caLife is how long a generated CA is valid; a leaf is valid for at most a
// year within it.
const caLife = 10 * 365 * 24 * time.Hour

// New makes a CA with a fresh ECDSA P-256 key.
func New() (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{Organization: []string{"fgrl mock"}, CommonName: "fgrl mock CA " + now.UTC().Format("2006-01-02 15:04:05")},
		NotBefore:    now.Add(-time.Hour), NotAfter: now.Add(caLife),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true, IsCA: true, MaxPathLenZero: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, key: key}, nil
}

// Load reads a CA from a PEM certificate file and a PEM private key file
// (PKCS #8, EC or PKCS #1), so that clients' trust outlives a run. A key
// file that other users may read is refused, and so is a CA that is not
// valid now (expired, or not yet valid): every leaf it signed would be.
func Load(certFile, keyFile string) (*CA, error) {
	fi, err := os.Stat(keyFile)
	if err != nil {
		return nil, fmt.Errorf("tlsca: CA key: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("tlsca: CA key %s is readable by other users (mode %v); chmod 600 it", safetext.Quote(keyFile, 200), fi.Mode().Perm())
	}
	certPEM, err := readPEM(certFile)
	if err != nil {
		return nil, fmt.Errorf("tlsca: CA certificate: %w", err)
	}
	keyPEM, err := readPEM(keyFile)
	if err != nil {
		return nil, fmt.Errorf("tlsca: CA key: %w", err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("tlsca: CA: %v", err)
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, fmt.Errorf("tlsca: CA certificate: %v", err)
	}
	key, ok := pair.PrivateKey.(crypto.Signer)
	if !ok || !cert.IsCA || cert.KeyUsage&x509.KeyUsageCertSign == 0 {
		return nil, errors.New("tlsca: the CA certificate is not a CA's (it must have basic constraints CA:TRUE and the certSign key usage)")
	}
	if now := time.Now(); now.After(cert.NotAfter) || now.Before(cert.NotBefore) {
		// Every leaf it signs would be refused: say so here.
		return nil, fmt.Errorf("tlsca: the CA certificate is valid from %s to %s, not now: make a new one (xblcall mock without --ca-cert and --ca-key makes one at start)",
			cert.NotBefore.UTC().Format(time.RFC3339), cert.NotAfter.UTC().Format(time.RFC3339))
	}
	return &CA{Cert: cert, key: key}, nil
}

// readPEM reads a file of at most 64 KiB.
func readPEM(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 64<<10+1))
	if err != nil {
		return nil, err
	}
	if len(b) > 64<<10 {
		return nil, fmt.Errorf("%s is over 64 KiB", safetext.Quote(name, 200))
	}
	return b, nil
}

// CertPEM returns the CA certificate in PEM, for clients to trust
// (NODE_EXTRA_CA_CERTS, SSL_CERT_FILE, curl --cacert).
func (ca *CA) CertPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Cert.Raw})
}

// KeyPEM returns the CA's private key in PEM (PKCS #8), to keep the CA for
// later runs (Load). Whoever holds it can sign certificates its trusters
// believe: store it readable by its owner only.
func (ca *CA) KeyPEM() ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(ca.key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// Pool returns a certificate pool holding the CA, for a Go client's
// tls.Config.RootCAs.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

// TLSConfig returns a server configuration that presents one leaf
// certificate, signed by ca, naming hosts (names, and patterns whose first
// label is or ends with '*', which become "*.<rest>"; other patterns are
// left out), localhost, 127.0.0.1 and ::1. A client that names another host (SNI) is refused in the
// handshake with an error naming it, which http.Server logs. A client
// certificate is not asked for, but one given must be ca's (IssuePartner)
// and current, or the handshake fails.
func (ca *CA) TLSConfig(hosts []string) (*tls.Config, error) {
	leaf, err := ca.leaf(hosts)
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		NextProtos: []string{"h2", "http/1.1"},
		ClientAuth: tls.VerifyClientCertIfGiven,
		ClientCAs:  ca.Pool(),
		GetCertificate: func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
			if sni := strings.ToLower(strings.TrimSuffix(hello.ServerName, ".")); sni != "" && leaf.Leaf.VerifyHostname(sni) != nil {
				return nil, fmt.Errorf("tlsca: no service at %s (the mock's TLS names the hosts xblcall mock --hosts lists)", safetext.Quote(sni, 100))
			}
			return leaf, nil
		},
	}, nil
}

// leaf signs the leaf certificate (its Leaf parsed, for VerifyHostname).
func (ca *CA) leaf(hosts []string) (*tls.Certificate, error) {
	names := []string{"localhost"}
	for _, h := range hosts {
		h = strings.TrimSuffix(strings.ToLower(h), ".") // a name given fully qualified is the same name
		if i := strings.IndexByte(h, '.'); i > 0 && strings.HasSuffix(h[:i], "*") && !strings.Contains(h[i:], "*") {
			h = "*" + h[i:] // club*.xboxlive.com: *.xboxlive.com
		} else if strings.Contains(h, "*") {
			continue // a star elsewhere (a*b.example.com): "*.example.com" would name every host of the domain
		}
		if !slices.Contains(names, h) {
			names = append(names, h)
		}
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	notAfter := now.Add(365 * 24 * time.Hour)
	if ca.Cert.NotAfter.Before(notAfter) {
		notAfter = ca.Cert.NotAfter
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{Organization: []string{"fgrl mock"}, CommonName: "fgrl mock services"},
		NotBefore:    now.Add(-time.Hour), NotAfter: notAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    names,
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.key)
	if err != nil {
		return nil, fmt.Errorf("tlsca: signing the leaf certificate: %v", err)
	}
	parsed, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &tls.Certificate{Certificate: [][]byte{der, ca.Cert.Raw}, PrivateKey: key, Leaf: parsed}, nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return n
}
