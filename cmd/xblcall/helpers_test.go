package main

import (
	"io"
	"net/http"

	"github.com/xblgo/fgrl/transport"
)

var throttleErrForTest = transport.ThrottleError{Status: 429, Wait: 12e9, Local: true}

var _ http.RoundTripper = (*tracer)(nil)

// withStdin gives a command r as its standard input.
func withStdin(r io.Reader) func(*env) { return func(e *env) { e.stdin = r } }
