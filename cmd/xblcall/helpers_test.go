package main

import (
	"net/http"

	"github.com/xblgo/fgrl/transport"
)

var throttleErrForTest = transport.ThrottleError{Status: 429, Wait: 12e9, Local: true}

var _ http.RoundTripper = (*tracer)(nil)
