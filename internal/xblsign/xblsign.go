// Package xblsign computes and verifies the Signature header of Xbox Live's
// signed requests: the device, title and SISU sign-in calls and every call
// whose NSAL endpoint names a signature policy.
//
// A signature is the policy's version (4 bytes, big-endian), the instant
// of signing as a Windows file time (8 bytes, big-endian) and an ECDSA
// P-256 signature (r and s, 32 bytes each) over the SHA-256 of
//
//	version \0 filetime \0 METHOD \0 path?query \0 Authorization \0 body[:MaxBodyBytes] \0
//
// the whole in standard base64 (OpenXbox/xbox-webapi-python,
// xbox/webapi/common/request_signer.py, and its tests' recorded vectors).
// The public key is sent as a JWK, the request's ProofKey (ProofKey).
//
// The package is used by both sides of the wire, the SDK's signed sign-in
// and the mock that checks it, so that the two cannot disagree.
package xblsign

import (
	"bytes"
	"cmp"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"net/http"
	"strings"
	"time"
)

// Policy is a signature policy, as a title's endpoint list (NSAL,
// title.mgt.xboxlive.com) gives it to each host.
type Policy struct {
	Version             int      `json:"Version"`
	SupportedAlgorithms []string `json:"SupportedAlgorithms"`
	MaxBodyBytes        int      `json:"MaxBodyBytes"`
	// ExtraHeaders names the headers, besides Authorization, whose values
	// the signature covers, in this order (the title service documentation's
	// signing steps; the policies NSAL lists for users' calls name none).
	ExtraHeaders []string `json:"ExtraHeaders,omitempty"`
}

// extraValues returns the values of p's extra headers in req, in order
// ("" for a header req lacks).
func (p Policy) extraValues(h http.Header) []string {
	if len(p.ExtraHeaders) == 0 {
		return nil
	}
	v := make([]string, len(p.ExtraHeaders))
	for i, name := range p.ExtraHeaders {
		v[i] = headerSent(h, name)
	}
	return v
}

// DefaultPolicy returns the policy the sign-in services use: version 1,
// ES256, the first 8192 bytes of the body (request_signer.py's
// DEFAULT_SIGNING_POLICY, and the policy NSAL lists).
func DefaultPolicy() Policy {
	return Policy{Version: 1, SupportedAlgorithms: []string{"ES256"}, MaxBodyBytes: 8192}
}

// MaxBodyBytes bounds a policy's MaxBodyBytes: the bytes of a body that
// Sign and Verify hold in memory at once.
const MaxBodyBytes = 1 << 20

// Header is a Signature header's content.
type Header struct {
	Version uint32
	Time    time.Time // the instant of signing, to the file time's 100 ns
	R, S    [32]byte
}

// headerLen is a decoded header's length: version, file time, r, s.
const headerLen = 4 + 8 + 32 + 32

// Errors of Verify and ParseHeader. Verify's errors wrap one of them.
var (
	ErrMissing   = errors.New("xblsign: no Signature header")
	ErrMalformed = errors.New("xblsign: Signature is not base64 of version, file time and P-256 signature")
	ErrPolicy    = errors.New("xblsign: signature version or algorithm not in the policy")
	ErrStale     = errors.New("xblsign: signature time outside the allowed skew")
	ErrKey       = errors.New("xblsign: proof key is not an ES256 P-256 public key")
	ErrSignature = errors.New("xblsign: signature does not match the request")
)

// check reports whether p is a policy this package signs with.
func (p Policy) check() error {
	es256 := false
	for _, a := range p.SupportedAlgorithms {
		es256 = es256 || a == "ES256"
	}
	if p.Version < 1 || p.Version > 1<<31 || !es256 || p.MaxBodyBytes < 0 || p.MaxBodyBytes > MaxBodyBytes {
		return fmt.Errorf("%w: version %d, algorithms %q, max body %d", ErrPolicy, p.Version, p.SupportedAlgorithms, p.MaxBodyBytes)
	}
	return nil
}

// Windows file time: 100 ns intervals since 1601-01-01 UTC.
const (
	fileTimeEpoch = 116444736000000000 // 1970-01-01 as a file time
	fileTimeTick  = 100 * time.Nanosecond
)

// FileTime returns t as a Windows file time; instants before 1601 are 0,
// and those past the last file time (in the year 60056) are the last.
func FileTime(t time.Time) uint64 {
	sec := t.Unix() + fileTimeEpoch/1e7 // seconds since 1601
	frac := uint64(t.Nanosecond()) / 100
	switch {
	case sec < 0:
		return 0
	case uint64(sec) > math.MaxUint64/uint64(1e7) || uint64(sec)*1e7 > math.MaxUint64-frac:
		return math.MaxUint64
	}
	return uint64(sec)*1e7 + frac
}

// timeOf is the instant of file time ft.
func timeOf(ft uint64) time.Time {
	return time.Unix(int64(ft/1e7)-fileTimeEpoch/1e7, int64(ft%1e7)*100).UTC()
}

// Digest returns the SHA-256 that a signature of version, made at ft,
// signs for a request: method (upper case, as sent), its path and query as
// sent, its Authorization header ("" when none), the values of the
// policy's extra headers in its order, and its body, of which the first
// maxBody bytes count. Each part is followed by a null byte.
func Digest(version uint32, ft uint64, method, pathAndQuery, authorization string, extra []string, body []byte, maxBody int) [32]byte {
	if len(body) > maxBody {
		body = body[:max(maxBody, 0)]
	}
	h := sha256.New()
	var n [8]byte
	binary.BigEndian.PutUint32(n[:4], version)
	h.Write(n[:4])
	h.Write([]byte{0})
	binary.BigEndian.PutUint64(n[:], ft)
	h.Write(n[:])
	for _, part := range []string{method, pathAndQuery, authorization} {
		h.Write([]byte{0})
		io.WriteString(h, part)
	}
	for _, part := range extra {
		h.Write([]byte{0})
		io.WriteString(h, part)
	}
	h.Write([]byte{0})
	h.Write(body)
	h.Write([]byte{0})
	var sum [32]byte
	h.Sum(sum[:0])
	return sum
}

// String is the header's value: standard base64 of its bytes.
func (h Header) String() string {
	var b [headerLen]byte
	binary.BigEndian.PutUint32(b[:4], h.Version)
	binary.BigEndian.PutUint64(b[4:12], FileTime(h.Time))
	copy(b[12:44], h.R[:])
	copy(b[44:], h.S[:])
	return base64.StdEncoding.EncodeToString(b[:])
}

// ParseHeader reads a Signature header's value. It is strict: standard
// base64 of exactly the header's 76 bytes.
func ParseHeader(v string) (Header, error) {
	if v == "" {
		return Header{}, ErrMissing
	}
	if base64.StdEncoding.EncodedLen(headerLen) != len(v) {
		return Header{}, ErrMalformed
	}
	var b [headerLen + 2]byte // DecodedLen of the encoded length, padding unread
	n, err := base64.StdEncoding.Strict().Decode(b[:], []byte(v))
	if err != nil || n != headerLen {
		return Header{}, ErrMalformed
	}
	ft := binary.BigEndian.Uint64(b[4:12])
	h := Header{Version: binary.BigEndian.Uint32(b[:4]), Time: timeOf(ft)}
	if FileTime(h.Time) != ft { // past the instants a time.Time holds
		return Header{}, ErrMalformed
	}
	copy(h.R[:], b[12:44])
	copy(h.S[:], b[44:])
	return h, nil
}

// Sign sets req's Signature header: key's signature of req at now under
// policy p. It reads at most p.MaxBodyBytes of the body, from
// req.GetBody when set, and otherwise puts what it read back in front of
// the rest of req.Body.
func Sign(req *http.Request, key *ecdsa.PrivateKey, now time.Time, p Policy) error {
	if err := p.check(); err != nil {
		return err
	}
	if key == nil || key.Curve != elliptic.P256() {
		return ErrKey
	}
	body, err := bodyPrefix(req, p.MaxBodyBytes, true)
	if err != nil {
		return err
	}
	ft := FileTime(now)
	sum := Digest(uint32(p.Version), ft, method(req), requestTarget(req), headerSent(req.Header, "Authorization"), p.extraValues(req.Header), body, p.MaxBodyBytes)
	r, s, err := ecdsa.Sign(rand.Reader, key, sum[:])
	if err != nil {
		return fmt.Errorf("xblsign: %w", err)
	}
	h := Header{Version: uint32(p.Version), Time: timeOf(ft)}
	r.FillBytes(h.R[:])
	s.FillBytes(h.S[:])
	if req.Header == nil {
		req.Header = http.Header{}
	}
	req.Header.Set("Signature", h.String())
	return nil
}

// Verify checks req's Signature header against the proof key pub, under
// policy p, at now: the signature must be of p's version, made within skew
// of now (either side), and match the request. It reads at most
// p.MaxBodyBytes of req.Body (never GetBody) and puts them back in front
// of the rest, so a handler reads the whole body after it, the bytes
// checked. Its error wraps ErrMissing,
// ErrMalformed, ErrPolicy, ErrStale, ErrKey or ErrSignature, or, when
// reading the body failed (a client gone mid-body), that read's error.
func Verify(req *http.Request, pub ProofKey, now time.Time, p Policy, skew time.Duration) error {
	if err := p.check(); err != nil {
		return err
	}
	h, err := ParseHeader(req.Header.Get("Signature"))
	if err != nil {
		return err
	}
	if h.Version != uint32(p.Version) {
		return fmt.Errorf("%w: version %d, want %d", ErrPolicy, h.Version, p.Version)
	}
	if d := h.Time.Sub(now); d > skew || d < -skew {
		return fmt.Errorf("%w: signed %v from now, allowed %v", ErrStale, d.Round(time.Second), skew)
	}
	key, err := pub.PublicKey()
	if err != nil {
		return err
	}
	body, err := bodyPrefix(req, p.MaxBodyBytes, false)
	if err != nil {
		return err
	}
	sum := Digest(h.Version, FileTime(h.Time), method(req), requestTarget(req), headerSent(req.Header, "Authorization"), p.extraValues(req.Header), body, p.MaxBodyBytes)
	if !ecdsa.Verify(key, sum[:], new(big.Int).SetBytes(h.R[:]), new(big.Int).SetBytes(h.S[:])) {
		return ErrSignature
	}
	return nil
}

// method is a request's method as sent: net/http sends "" as GET.
func method(req *http.Request) string { return cmp.Or(req.Method, http.MethodGet) }

// headerSent is the value of h's header name as net/http writes it and
// its server reads it: without leading or trailing spaces and tabs.
func headerSent(h http.Header, name string) string { return strings.Trim(h.Get(name), " \t") }

// requestTarget is a request's path and query as sent: a server's
// request's target as received, a client's as it will be written.
func requestTarget(req *http.Request) string {
	if t := req.RequestURI; t != "" && t[0] == '/' {
		return t
	}
	return req.URL.RequestURI()
}

// bodyPrefix returns the first n bytes of req's body, leaving the body
// whole for whoever reads it next. A client's request (Sign) may be read
// through GetBody; a server's (Verify) only through Body, which is what
// its handler reads: a GetBody left on a request handed to a server (a
// client's request cloned, as in-process round trippers do) may give
// other bytes.
func bodyPrefix(req *http.Request, n int, getBody bool) ([]byte, error) {
	if req.Body == nil || req.Body == http.NoBody || n == 0 {
		return nil, nil
	}
	if getBody && req.GetBody != nil {
		rc, err := req.GetBody()
		if err != nil {
			return nil, fmt.Errorf("xblsign: body: %w", err)
		}
		defer rc.Close()
		return io.ReadAll(io.LimitReader(rc, int64(n)))
	}
	b, err := io.ReadAll(io.LimitReader(req.Body, int64(n)))
	if err != nil {
		return nil, fmt.Errorf("xblsign: body: %w", err)
	}
	req.Body = prefixed{io.MultiReader(bytes.NewReader(b), req.Body), req.Body}
	return b, nil
}

// prefixed is a body whose first bytes were read already: they come
// first, and Close closes the original.
type prefixed struct {
	io.Reader
	c io.Closer
}

func (p prefixed) Close() error { return p.c.Close() }

// Canonical returns h with s in the lower half of the curve's order. An
// ECDSA signature (r, s) and its twin (r, n−s) verify alike, and whoever
// sees one can make the other without the key: a record of the signatures
// seen (to refuse one presented again) keeps their canonical forms.
func (h Header) Canonical() Header {
	n := elliptic.P256().Params().N
	s := new(big.Int).SetBytes(h.S[:])
	if s.Cmp(new(big.Int).Rsh(n, 1)) > 0 {
		s.Sub(n, s).FillBytes(h.S[:])
	}
	return h
}
