package transport

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/hresult"
	"github.com/xblgo/fgrl/internal/xblauth"
)

// atk2Coded is a Base's error that reports an HRESULT and quotes the
// token, upper-cased, in its text.
type atk2Coded struct{ s string }

func (e *atk2Coded) Error() string            { return e.s }
func (e *atk2Coded) HRESULT() hresult.HRESULT { return hresult.E_HC_NO_NETWORK }

// atk2Reveal reports every text a program can get from err: its verbs,
// its causes' verbs, what errors.As gives for the reporter and codedError
// types, read field by field.
func atk2Reveal(err error) string {
	var b strings.Builder
	seen := 0
	var walk func(error)
	walk = func(e error) {
		if e == nil || seen > 100 {
			return
		}
		seen++
		for _, f := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x"} {
			fmt.Fprintf(&b, f+"\n", e)
		}
		atk2Fields(&b, reflect.ValueOf(e), 0)
		switch u := e.(type) {
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		case interface{ Unwrap() []error }:
			for _, c := range u.Unwrap() {
				walk(c)
			}
		}
	}
	walk(err)
	var r hresult.Reporter
	if errors.As(err, &r) {
		fmt.Fprintf(&b, "%v %+v %#v\n", r, r, r)
		atk2Fields(&b, reflect.ValueOf(r), 0)
	}
	var c *codedError
	if errors.As(err, &c) {
		fmt.Fprintf(&b, "%v %+v %#v\n", c, c, c)
		atk2Fields(&b, reflect.ValueOf(c), 0)
	}
	var a *atk2Coded
	if errors.As(err, &a) {
		b.WriteString(a.s)
	}
	return b.String()
}

// atk2Fields writes the exported string fields of v, a few levels down.
func atk2Fields(b *strings.Builder, v reflect.Value, depth int) {
	if depth > 6 || !v.IsValid() {
		return
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			atk2Fields(b, v.Elem(), depth+1)
		}
	case reflect.String:
		b.WriteString(v.String() + "\n")
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				atk2Fields(b, v.Field(i), depth+1)
			}
		}
	}
}

func TestScrub2CodedErrorEndToEnd(t *testing.T) {
	auth := "XBL3.0 x=123456789;" + atkToken
	for _, text := range []string{
		"down; sent " + auth,
		"down; sent " + strings.ToUpper(atkToken),
	} {
		tr := &Transport{RetryWindow: -1, DisableBudget: true, Base: atkBase(func(r *http.Request) (*http.Response, error) {
			return nil, fmt.Errorf("dial: %w", &atk2Coded{s: text})
		})}
		for _, via := range []string{"RoundTrip", "http.Client"} {
			err := sendVia(t, tr, via, auth)
			if got := strings.ToLower(atk2Reveal(err)); strings.Contains(got, strings.ToLower(atkToken)) {
				t.Errorf("hole: %s, %q: the token is learned from the error:\n%s", via, text, got)
			}
			if hresult.Of(err) != hresult.E_HC_NO_NETWORK {
				t.Errorf("hole: %s: hresult.Of = %v, want E_HC_NO_NETWORK", via, hresult.Of(err))
			}
		}
	}
}

// keepCode must not change which error errors.Is finds, nor what
// Timeout says.
type atk2TimeoutCoded struct{ s string }

func (e *atk2TimeoutCoded) Error() string            { return e.s }
func (e *atk2TimeoutCoded) HRESULT() hresult.HRESULT { return hresult.E_HC_NO_NETWORK }
func (e *atk2TimeoutCoded) Timeout() bool            { return true }
func (e *atk2TimeoutCoded) Unwrap() error            { return context.DeadlineExceeded }

func TestScrub2KeepCodeIsAs(t *testing.T) {
	ss := xblauth.Secrets{}.Add(atkToken)
	raw := fmt.Errorf("GET %s: %w", atkToken, &atk2TimeoutCoded{s: "timeout " + atkToken})
	got := keepCode(raw, ss.ScrubError(raw))
	if !errors.Is(got, context.DeadlineExceeded) {
		t.Errorf("hole: keepCode lost errors.Is(DeadlineExceeded)")
	}
	var te interface{ Timeout() bool }
	if !errors.As(got, &te) || !te.Timeout() {
		t.Errorf("hole: keepCode lost Timeout")
	}
	if hresult.Of(got) != hresult.Of(raw) {
		t.Errorf("hole: hresult.Of changed: %v, want %v", hresult.Of(got), hresult.Of(raw))
	}
	if permanent(got) != permanent(raw) {
		t.Errorf("hole: permanent changed")
	}
	if s := strings.ToLower(atk2Reveal(got)); strings.Contains(s, strings.ToLower(atkToken)) {
		t.Errorf("hole: keepCode's error tells the token:\n%s", s)
	}
}

// Certificate errors a real handshake gives (an ECDSA chain) keep their
// decisions when a wrapper's text tells the token.
func TestScrub2CertDecisions(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "atk.example", Organization: []string{"o"}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		DNSNames: []string{"atk.example", "b.example"}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	chain := []*x509.Certificate{cert, cert, cert, cert}
	_, verr := cert.Verify(x509.VerifyOptions{DNSName: "atk.example", Roots: x509.NewCertPool()})
	_, herr := cert.Verify(x509.VerifyOptions{DNSName: "other.example"})
	ss := xblauth.Secrets{}.Add(atkToken)
	for name, cause := range map[string]error{
		"unknown authority": verr,
		"hostname":          herr,
		"verification":      &tls.CertificateVerificationError{UnverifiedCertificates: chain, Err: verr},
		"invalid":           x509.CertificateInvalidError{Cert: cert, Reason: x509.Expired},
	} {
		raw := fmt.Errorf("GET %s: %w", atkToken, cause)
		got := ss.ScrubError(raw)
		if permanent(got) != permanent(raw) {
			t.Errorf("hole: %s: permanent changed by scrubbing: %v, want %v", name, permanent(got), permanent(raw))
		}
	}
}
