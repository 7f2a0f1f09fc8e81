package client

import (
	"context"
	"crypto/ecdsa"
)

// Token is what authenticates one user's calls. It prints (fmt, log/slog)
// and is written as JSON or XML with its secrets "[redacted]" (tokenfmt.go);
// fmt's report of a wrong verb, and encoders and printers that read fields
// by reflection (encoding/gob, go-cmp's Diff) see them as they are.
type Token struct {
	// Authorization is the full header value: "XBL3.0 x=<userhash>;<token>".
	Authorization string
	// Signature is the request signature, when the platform provides one.
	Signature string
	// Key is the proof key the token was issued to (a service's, or a
	// device's): when set, every request is signed with it (the Signature
	// header, per the host's SignaturePolicy), each attempt afresh, and
	// Signature is not used. It never leaves the process.
	Key *ecdsa.PrivateKey
}

// TokenSource returns the token for a user. Implementations must be safe for
// concurrent use and should cache: it is called for every request.
type TokenSource interface {
	Token(ctx context.Context, xuid string) (Token, error)
}

// StaticTokens is a TokenSource holding one Authorization value per xuid.
type StaticTokens map[string]string

// Token returns the Authorization for xuid, or ErrNoToken.
func (s StaticTokens) Token(_ context.Context, xuid string) (Token, error) {
	a, ok := s[xuid]
	if !ok {
		return Token{}, ErrNoToken
	}
	return Token{Authorization: a}, nil
}

// TokenFunc adapts a function to a TokenSource.
type TokenFunc func(ctx context.Context, xuid string) (Token, error)

// Token calls f.
func (f TokenFunc) Token(ctx context.Context, xuid string) (Token, error) { return f(ctx, xuid) }
