package transport

import (
	"context"
	"net/http"
)

// A Signer sets the Signature header of one attempt's request (the
// request's own copy: its headers and body are the attempt's). It is
// called on the call's goroutine just before each attempt is sent; an
// error ends the call with that error, the attempt unsent.
//
// The signature covers the instant of signing, the Authorization and the
// body, so a request signed once goes stale across retries and waits, and
// is wrong after a 401's refresh: the transport asks for a fresh one per
// attempt instead.
type Signer func(req *http.Request) error

type signerKey struct{}

// WithSigner returns a context whose calls are signed by sign before every
// attempt, retries and the retry after a token refresh included (the typed
// client sets it for a token bound to a proof key). A nil sign removes the
// context's signer.
func WithSigner(ctx context.Context, sign Signer) context.Context {
	return context.WithValue(ctx, signerKey{}, sign)
}

// signerOf returns the Signer ctx carries, or nil.
func signerOf(ctx context.Context) Signer {
	s, _ := ctx.Value(signerKey{}).(Signer)
	return s
}
