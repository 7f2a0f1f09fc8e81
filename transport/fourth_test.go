package transport

// A fourth attack (2026-12-04) on the scrubbing of credentials from the
// service's text (xblauth.Secrets). Each test failed before its fix but
// TestFourthScrubbedDecisions, a probe that held.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/xblgo/fgrl/hresult"
	"github.com/xblgo/fgrl/internal/xblauth"
)

const fourthTok = "eyJhbGciOiJSUzI1NiJ9.FOURTHsecretTOKENbodyPART0123456789abcdefghijklmnopqrstuvwxyz.SIGpart+/=="
const fourthSig = "AAAAAQHYfourthSIGNATURE+abc/def+ghi/jkl0123456789=="

// fourth429 answers every attempt with a 429 whose body the test writes.
func fourth429(body string) roundTripFunc {
	return func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 429, Header: http.Header{"Retry-After": {"3600"}},
			Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
	}
}

func fourthReq(t *testing.T, h func(http.Header)) *http.Request {
	t.Helper()
	req, err := http.NewRequest("GET", profileURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	h(req.Header)
	return req
}

// TestFourthLowercaseAuthorizationEchoed: an Authorization header whose
// key is set directly in lower case, which the transport reads and
// net/http sends, was not scrubbed (h.Get missed it).
func TestFourthLowercaseAuthorizationEchoed(t *testing.T) {
	tr := &Transport{Base: fourth429(`{"version":1,"currentRequests":2,"maxRequests":1,"periodInSeconds":15,"limitType":"Rate","debugMessage":"you sent ` + fourthTok + `"}`), DisableBudget: true, RetryWindow: -1}
	req := fourthReq(t, func(h http.Header) { h["authorization"] = []string{"XBL3.0 x=123;" + fourthTok} })
	_, err := tr.RoundTrip(req)
	var te *ThrottleError
	if !errors.As(err, &te) || te.Body == nil {
		t.Fatalf("err %v: want a ThrottleError with its body", err)
	}
	if strings.Contains(te.Body.DebugMessage, fourthTok[:40]) {
		t.Errorf("DebugMessage %q holds the token sent under h[\"authorization\"]", te.Body.DebugMessage)
	}
	tr2 := &Transport{Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return nil, fmt.Errorf("malformed HTTP response %q", headerFold(r.Header, "Authorization"))
	}), DisableBudget: true, RetryWindow: -1}
	_, err = tr2.RoundTrip(fourthReq(t, func(h http.Header) { h["authorization"] = []string{"XBL3.0 x=123;" + fourthTok} }))
	if err == nil || strings.Contains(err.Error(), fourthTok[:40]) {
		t.Errorf("base error %v holds the token sent under h[\"authorization\"]", err)
	}
}

// TestFourthLimitTypeEchoesToken: a 429's limitType was clipped to 64
// bytes, never scrubbed: the token's first part reached ThrottleError.Body,
// the Event and fgrlotel's fgrl.limit.type.
func TestFourthLimitTypeEchoesToken(t *testing.T) {
	var seen []string
	tr := &Transport{Base: fourth429(`{"version":1,"currentRequests":2,"maxRequests":1,"periodInSeconds":15,"limitType":"` + fourthTok + `"}`),
		DisableBudget: true, RetryWindow: -1, Observe: func(_ context.Context, e Event) {
			if e.Body != nil {
				seen = append(seen, e.Body.LimitType)
			}
		}}
	_, err := tr.RoundTrip(fourthReq(t, func(h http.Header) { h.Set("Authorization", "XBL3.0 x=123;"+fourthTok) }))
	var te *ThrottleError
	if !errors.As(err, &te) || te.Body == nil {
		t.Fatalf("err %v: want a ThrottleError with its body", err)
	}
	if strings.Contains(te.Body.LimitType, fourthTok[:40]) {
		t.Errorf("ThrottleError.Body.LimitType %q holds the token's first part", te.Body.LimitType)
	}
	for _, s := range seen {
		if strings.Contains(s, fourthTok[:40]) {
			t.Errorf("Event.Body.LimitType %q holds the token", s)
		}
	}
}

// TestFourthEscapedSignatureEchoed: the Signature echoed URL-escaped, the
// token path-escaped or upper-cased, in a 429's debugMessage.
func TestFourthEscapedSignatureEchoed(t *testing.T) {
	for name, echo := range map[string]string{
		"query-escaped signature": url.QueryEscape(fourthSig),
		"path-escaped token":      url.PathEscape(fourthTok),
		"upper-cased token":       strings.ToUpper(fourthTok),
	} {
		tr := &Transport{Base: fourth429(`{"version":1,"currentRequests":2,"maxRequests":1,"periodInSeconds":15,"limitType":"Rate","debugMessage":"` + echo + `"}`), DisableBudget: true, RetryWindow: -1}
		_, err := tr.RoundTrip(fourthReq(t, func(h http.Header) {
			h.Set("Authorization", "XBL3.0 x=123;"+fourthTok)
			h.Set("Signature", fourthSig)
		}))
		var te *ThrottleError
		if !errors.As(err, &te) || te.Body == nil {
			t.Fatalf("%s: err %v", name, err)
		}
		if strings.Contains(te.Body.DebugMessage, echo[:30]) {
			t.Errorf("%s: DebugMessage %q still holds it", name, te.Body.DebugMessage)
		}
	}
}

// TestFourthOtherCredentialHeadersEchoed: Cookie and Proxy-Authorization,
// credentials a request may carry too, quoted in the base's error.
func TestFourthOtherCredentialHeadersEchoed(t *testing.T) {
	const cookie = "session=COOKIEsecretVALUE0123456789"
	const proxy = "Basic UFJPWFlzZWNyZXQ6cGFzc3dvcmQxMjM="
	tr := &Transport{Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return nil, fmt.Errorf("malformed HTTP response %q %q", r.Header.Get("Cookie"), r.Header.Get("Proxy-Authorization"))
	}), DisableBudget: true, RetryWindow: -1}
	_, err := tr.RoundTrip(fourthReq(t, func(h http.Header) {
		h.Set("Authorization", "XBL3.0 x=123;"+fourthTok)
		h.Set("Cookie", cookie)
		h.Set("Proxy-Authorization", proxy)
	}))
	if err != nil && (strings.Contains(err.Error(), cookie) || strings.Contains(err.Error(), proxy)) {
		t.Errorf("base error %v holds the Cookie or Proxy-Authorization", err)
	}
}

// fourthTimeout is a net.Error timeout whose text may quote the signature.
type fourthTimeout struct{ text string }

func (e *fourthTimeout) Error() string   { return e.text }
func (e *fourthTimeout) Timeout() bool   { return true }
func (e *fourthTimeout) Temporary() bool { return true }

// TestFourthScrubbedTimeoutStaysTimeout: through an http.Client (as the
// client package calls), a timeout whose text held the signature was no
// longer one: *url.Error asks its error for Timeout directly, and the
// scrubbed error had no such method (E_FAIL instead of the timeout's
// HRESULT).
func TestFourthScrubbedTimeoutStaysTimeout(t *testing.T) {
	for _, withSecret := range []bool{false, true} {
		tr := &Transport{Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			text := "i/o timeout reading from server"
			if withSecret {
				text += " after " + r.Header.Get("Signature")
			}
			return nil, &fourthTimeout{text}
		}), DisableBudget: true, RetryWindow: -1}
		hc := &http.Client{Transport: tr}
		_, err := hc.Do(fourthReq(t, func(h http.Header) {
			h.Set("Authorization", "XBL3.0 x=123;"+fourthTok)
			h.Set("Signature", fourthSig)
		}))
		var ue *url.Error
		if !errors.As(err, &ue) {
			t.Fatalf("secret %v: %T %v", withSecret, err, err)
		}
		var ne net.Error
		asNet := errors.As(err, &ne) && ne.Timeout()
		if !ue.Timeout() || !asNet || hresult.Of(err) != hresult.HTTP_E_STATUS_REQUEST_TIMEOUT {
			t.Errorf("secret in text %v: url.Error.Timeout()=%v, errors.As(net.Error).Timeout()=%v, HRESULT %v; want a timeout either way",
				withSecret, ue.Timeout(), asNet, hresult.Of(err))
		}
		if strings.Contains(err.Error(), fourthSig) {
			t.Errorf("the error's text holds the signature: %v", err)
		}
	}
}

// TestFourthScrubbedDecisions: the transport's own decisions do not
// depend on a secret in an error's text: a DNS not-found stays permanent,
// a timeout keeps its HRESULT.
func TestFourthScrubbedDecisions(t *testing.T) {
	for name, tc := range map[string]struct{ secret, plain error }{
		"dns": {&net.DNSError{Err: "no such host " + fourthSig, Name: "x" + fourthSig, IsNotFound: true},
			&net.DNSError{Err: "no such host", Name: "x", IsNotFound: true}},
		"timeout": {&fourthTimeout{"i/o timeout " + fourthSig}, &fourthTimeout{"i/o timeout"}},
	} {
		s := xblauth.Secrets{}.Add(fourthSig).ScrubError(tc.secret)
		if permanent(s) != permanent(tc.plain) || hresult.Of(s) != hresult.Of(tc.plain) {
			t.Errorf("%s: permanent %v/%v, HRESULT %v/%v with/without the secret", name, permanent(s), permanent(tc.plain), hresult.Of(s), hresult.Of(tc.plain))
		}
	}
}
