package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/xblgo/fgrl/client"
	"github.com/xblgo/fgrl/internal/safetext"
)

const serviceSignInHelp = `
--service signs in as a game backend does: --cert and --key are its
Business Partner Certificate and private key (PEM; one file may hold
both), the key file readable by its owner only. XSAS gives an S-token for
a fresh proof key, XSTS the service's own X-token ('XBL3.0 x=-;...'),
which only multiplayer, string verification and deleted accounts take.
The stored sign-in keeps the files' paths, never the key; 'whoami' and
'call' sign in again from them and sign every request with the proof key.
Against the mock: xblcall mock --https 127.0.0.1:8443 --ca-out ca.pem
--partner-cert partner.pem, then xblcall login --service --cert
partner.pem --key partner.pem --via https://127.0.0.1:8443 --ca ca.pem.
`

// storedService is a stored service sign-in: where its certificate and
// key are, and its sandbox.
type storedService struct {
	Cert    string `json:"cert"`
	Key     string `json:"key"`
	Sandbox string `json:"sandbox"`
	// CA is a CA certificate file trusted besides the system's: a mock's
	// (xblcall mock --ca-out).
	CA string `json:"ca,omitempty"`
}

// serviceSignIn returns the service sign-in of the stored files, its
// requests sent through via (when set), over TLS presenting the partner
// certificate and trusting CA; base is the TLS transport, for the service
// calls made with its tokens.
func (ss *storedService) serviceSignIn(via string) (s *client.ServiceSignIn, base *http.Transport, err error) {
	cert, err := client.LoadPartnerCertificate(ss.Cert, ss.Key)
	if err != nil {
		return nil, nil, &exitError{2, err}
	}
	base = http.DefaultTransport.(*http.Transport).Clone()
	base.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
	if ss.CA != "" {
		pool, err := certPool(ss.CA)
		if err != nil {
			return nil, nil, &exitError{2, fmt.Errorf("--ca %s: not a PEM certificate file", safetext.Quote(ss.CA, 200))}
		}
		base.TLSClientConfig.RootCAs = pool
	}
	var rt http.RoundTripper = base
	if via != "" {
		if rt, err = viaTransport(via, base); err != nil {
			return nil, nil, err
		}
	}
	return &client.ServiceSignIn{Certificate: cert, Sandbox: ss.Sandbox, HTTPClient: &http.Client{Transport: rt}}, base, nil
}

// loginService is login --service.
func (o *loginOpts) loginService(ctx context.Context, e *env) error {
	if o.cert == "" || o.key == "" {
		return &exitError{2, errors.New("--service needs --cert and --key (the Business Partner Certificate and its key)")}
	}
	if o.via != "" {
		if _, err := parseVia("--via", o.via); err != nil {
			return &exitError{2, err}
		}
	}
	certFile, err := filepath.Abs(o.cert)
	if err != nil {
		return err
	}
	keyFile, err := filepath.Abs(o.key)
	if err != nil {
		return err
	}
	ss := &storedService{Cert: certFile, Key: keyFile, Sandbox: o.sandbox}
	if o.ca != "" {
		if ss.CA, err = filepath.Abs(o.ca); err != nil {
			return err
		}
		// The stored sign-in keeps the path, which every later command
		// reads again: a pipe (<(...), /dev/stdin) would be gone, or read
		// another input.
		if fi, err := os.Stat(ss.CA); err == nil && !fi.Mode().IsRegular() {
			return &exitError{2, fmt.Errorf("--ca %s: not a regular file (%v): the stored sign-in keeps its path, which later commands read again", safetext.Quote(o.ca, 200), fi.Mode().Type())}
		}
	}
	s, _, err := ss.serviceSignIn(o.via)
	if err != nil {
		return err
	}
	x, err := s.ServiceToken(ctx)
	if err != nil {
		return err
	}
	if err := (&stored{Sandbox: o.sandbox, Via: o.via, Service: ss}).save(ctx, e); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "signed in as the service of %s in sandbox %s; X-token valid until %s\n",
		safetext.Clip(certFile, 200), safetext.Clip(o.sandbox, 40), x.NotAfter.UTC().Format(time.RFC3339))
	return nil
}

// whoamiService is whoami for a stored service sign-in.
func (o *whoamiOpts) whoamiService(ctx context.Context, e *env, st *stored) error {
	s, _, err := st.Service.serviceSignIn(st.Via)
	if err != nil {
		return err
	}
	x, err := s.ServiceToken(ctx)
	if err != nil {
		return err
	}
	name := ""
	if leaf, err := leafOf(s.Certificate); err == nil {
		name = leaf
	}
	if o.json {
		return json.NewEncoder(e.stdout).Encode(map[string]string{"service": name, "userhash": x.UserHash, "sandbox": st.Service.Sandbox,
			"notAfter": x.NotAfter.UTC().Format(time.RFC3339)})
	}
	fmt.Fprintf(e.stdout, "the service %s in sandbox %s, X-token valid until %s\n", safetext.Clip(name, 64),
		safetext.Clip(st.Service.Sandbox, 40), x.NotAfter.UTC().Format(time.RFC3339))
	return nil
}

// leafOf returns the common name of a certificate's leaf.
func leafOf(c tls.Certificate) (string, error) {
	if len(c.Certificate) == 0 {
		return "", errors.New("no certificate")
	}
	leaf, err := x509.ParseCertificate(c.Certificate[0])
	if err != nil {
		return "", err
	}
	return leaf.Subject.CommonName, nil
}
