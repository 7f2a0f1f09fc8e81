package proxy

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/xblgo/fgrl/mock"
)

// held: a streamed (chunked) request body whose
// trailer section carries Fgrl- fields and the proxy's access token in
// Proxy-Authorization: none of them reaches the service.
// Promise: policy.go, the header constants' doc ("The proxy reads every
// header whose name starts with PolicyPrefix and strips it: none reaches
// the service"); proxy.go rewrite's comment (Proxy-Authorization is
// stripped); RFC 9110 §6.5 (trailer fields are fields of the message, as
// headers are) and §6.5.1 (a field not allowed in trailers is not sent
// there). (Held: the names reach the service in the Trailer header, which
// the outgoing request's copy of the trailer keeps; their values never.)
func TestAttack3PolicyTrailerNotSent(t *testing.T) {
	got := make(chan http.Header, 1)
	f := serve(t, withBase(upstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		tr := r.Trailer.Clone()
		for k, v := range r.Header {
			if strings.HasPrefix(strings.ToLower(k), "fgrl-") || strings.EqualFold(k, "Proxy-Authorization") {
				tr[k] = v
			}
		}
		got <- tr
		w.WriteHeader(200)
	}))))
	auth := mock.Token(xuid1, title)
	resp, body := pxAtk2Request(t, f, "POST /users/batch/profile/settings HTTP/1.1\r\nHost: profile.xboxlive.com\r\nAuthorization: "+auth+
		"\r\nx-xbl-contract-version: 2\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"+
		"Trailer: Fgrl-Rule, Fgrl-Secret, Proxy-Authorization\r\nConnection: close\r\n\r\n"+
		"2\r\n{}\r\n0\r\nFgrl-Rule: profile\r\nFgrl-Secret: POLICY-TRAILER\r\nProxy-Authorization: Basic ZmdybDpBQ0NFU1MtVE9LRU4=\r\n\r\n")
	t.Logf("status %d %q", resp.StatusCode, body)
	tr := guard(t, got, "the call")
	vals := 0
	for _, v := range tr {
		for _, x := range v {
			if x != "" {
				vals++
			}
		}
	}
	if vals != 0 {
		t.Errorf("the service got these Fgrl- or Proxy-Authorization fields (as trailers): %v", tr)
	}
}
