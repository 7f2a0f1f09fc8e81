package client

import (
	"crypto/ecdsa"
	"net/http"
	"strings"
	"time"

	"github.com/xblgo/fgrl/internal/xblsign"
	"github.com/xblgo/fgrl/transport"
)

// SignaturePolicy is how a host wants its requests signed: the policy's
// version, its algorithms (ES256 is the one this SDK signs with) and how
// many bytes of a body the signature covers, as a title's endpoint list
// (NSAL) gives it per host ("Title service calls to Xbox services",
// Proof keys).
type SignaturePolicy = xblsign.Policy

// DefaultSignaturePolicy returns the policy a host gets when
// Config.SignaturePolicies names none: version 1, ES256, the first 8192
// bytes of the body, the policy NSAL lists for the Xbox services.
func DefaultSignaturePolicy() SignaturePolicy { return xblsign.DefaultPolicy() }

// AuthSignaturePolicy returns the policy of the authentication services
// (XSAS, XSTS): version 1, ES256, the whole body (the documentation's
// MaxBodyBytes is long.MaxValue; this SDK signs at most xblsign's 1 MiB
// bound, far above any sign-in body).
func AuthSignaturePolicy() SignaturePolicy {
	return SignaturePolicy{Version: 1, SupportedAlgorithms: []string{"ES256"}, MaxBodyBytes: xblsign.MaxBodyBytes}
}

// signer returns the transport.Signer of calls to host made with a token
// bound to key: each attempt is signed at its own instant under the host's
// policy.
func (c *Client) signer(host string, key *ecdsa.PrivateKey) transport.Signer {
	p, ok := c.cfg.SignaturePolicies[strings.ToLower(host)]
	if !ok {
		p = DefaultSignaturePolicy()
	}
	return SignWith(key, p)
}

// SignWith returns a transport.Signer that signs each attempt with key
// under policy p at the instant it is sent, for requests made without a
// Client (transport.WithSigner).
func SignWith(key *ecdsa.PrivateKey, p SignaturePolicy) transport.Signer {
	return func(req *http.Request) error { return xblsign.Sign(req, key, time.Now(), p) }
}
