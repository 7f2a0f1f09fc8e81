package xblsign

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"encoding/base64"
	"fmt"
)

// ProofKey is a public key as a signed request's body carries it
// (Properties.ProofKey of device/authenticate, ProofKey of SISU's
// authorize): a JSON Web Key of an ES256 P-256 key, its coordinates in
// unpadded base64url of 32 bytes each (RFC 7517, RFC 7518 6.2.1;
// request_signer.py's proof_field).
type ProofKey struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	Alg string `json:"alg"`
	Use string `json:"use"`
	X   string `json:"x"`
	Y   string `json:"y"`
}

// ProofKeyOf returns pub as a ProofKey.
func ProofKeyOf(pub *ecdsa.PublicKey) ProofKey {
	b, err := pub.Bytes() // 0x04 || x || y
	if err != nil || len(b) != 65 {
		return ProofKey{}
	}
	enc := base64.RawURLEncoding
	return ProofKey{Kty: "EC", Crv: "P-256", Alg: "ES256", Use: "sig", X: enc.EncodeToString(b[1:33]), Y: enc.EncodeToString(b[33:])}
}

// PublicKey returns the key k names: a point of P-256, with kty "EC", crv
// "P-256" and, when given, alg "ES256" and use "sig". Its error wraps
// ErrKey.
func (k ProofKey) PublicKey() (*ecdsa.PublicKey, error) {
	if k.Kty != "EC" || k.Crv != "P-256" || (k.Alg != "" && k.Alg != "ES256") || (k.Use != "" && k.Use != "sig") {
		return nil, ErrKey
	}
	var pt [65]byte
	pt[0] = 4
	if !coord(pt[1:33], k.X) || !coord(pt[33:], k.Y) {
		return nil, ErrKey
	}
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), pt[:])
	if err != nil {
		return nil, fmt.Errorf("%w: not a point of the curve", ErrKey)
	}
	return pub, nil
}

// coord decodes a coordinate: unpadded base64url of exactly len(dst)
// bytes.
func coord(dst []byte, s string) bool {
	enc := base64.RawURLEncoding.Strict()
	if enc.EncodedLen(len(dst)) != len(s) {
		return false
	}
	n, err := enc.Decode(dst, []byte(s))
	return err == nil && n == len(dst)
}
