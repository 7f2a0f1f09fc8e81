package tlsca

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"time"
)

// Partner describes a Business Partner Certificate: the client certificate
// a title's service presents to the mock's service sign-in
// (service.auth.xboxlive.com), as Xbox services' own CA issues one per
// publisher.
type Partner struct {
	// Name is the service's name, the certificate's common name: the
	// identity its service-auth calls count against. 1 to 64 bytes.
	Name string
	// Sandbox, when set, is the one sandbox the certificate is for (its
	// organizational unit); empty means every sandbox.
	Sandbox string
	// NotBefore and NotAfter bound its validity; zero means from an hour
	// ago, and 18 months from now (the documented lifespan). NotAfter is
	// held within the CA's validity; NotBefore is taken as given, even
	// before the CA's (a test's expired certificate: NotBefore and NotAfter
	// both past, which a CA made at start could not sign otherwise).
	NotBefore, NotAfter time.Time
}

// PartnerLife is the validity of a Business Partner Certificate whose
// NotAfter is zero: about 18 months, as Partner Center issues them.
const PartnerLife = 548 * 24 * time.Hour

// IssuePartner signs a Business Partner Certificate for p with a fresh
// ECDSA P-256 key, returning the certificate (followed by the CA's) and
// the key (PKCS #8), both PEM: load them with tls.X509KeyPair or
// tls.LoadX509KeyPair. Whoever holds the key signs in as the service:
// store it readable by its owner only.
func (ca *CA) IssuePartner(p Partner) (certPEM, keyPEM []byte, err error) {
	if p.Name == "" || len(p.Name) > 64 || len(p.Sandbox) > 64 {
		return nil, nil, errors.New("tlsca: a partner certificate needs a name of 1 to 64 bytes, and a sandbox of at most 64")
	}
	now := time.Now()
	if p.NotBefore.IsZero() {
		p.NotBefore = now.Add(-time.Hour)
	}
	if p.NotAfter.IsZero() {
		p.NotAfter = now.Add(PartnerLife)
	}
	if p.NotAfter.After(ca.Cert.NotAfter) {
		p.NotAfter = ca.Cert.NotAfter
	}
	if !p.NotAfter.After(p.NotBefore) {
		return nil, nil, errors.New("tlsca: a partner certificate's NotAfter must come after its NotBefore")
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	subject := pkix.Name{Organization: []string{"fgrl mock partner"}, CommonName: p.Name}
	if p.Sandbox != "" {
		subject.OrganizationalUnit = []string{p.Sandbox}
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: subject, NotBefore: p.NotBefore, NotAfter: p.NotAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.key)
	if err != nil {
		return nil, nil, fmt.Errorf("tlsca: signing the partner certificate: %v", err)
	}
	k, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	certPEM = append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), ca.CertPEM()...)
	return certPEM, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: k}), nil
}
