package xblauth

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"
)

const atk2Tok = "eyJhbGciOi+JIUzI1/NiJ9.abcDEF+ghi/JKLmnop=="

// atk2TextLeak reports a text of err's tree, under any common verb, that
// holds tok (any ASCII case) or a part of it of frag bytes or more.
func atk2TextLeak(err error, tok string, frag int) string {
	var texts []string
	walkAll(err, func(e error) {
		for _, f := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%T"} {
			texts = append(texts, fmt.Sprintf(f, e))
		}
	})
	lt := strings.ToLower(tok)
	for _, t := range texts {
		lo := strings.ToLower(t)
		for i := 0; i+frag <= len(lt); i++ {
			if strings.Contains(lo, lt[i:i+frag]) {
				return t
			}
		}
	}
	return ""
}

func walkAll(err error, f func(error)) {
	n := 0
	var w func(error)
	w = func(e error) {
		if e == nil || n > 1000 {
			return
		}
		n++
		f(e)
		switch u := e.(type) {
		case interface{ Unwrap() error }:
			w(u.Unwrap())
		case interface{ Unwrap() []error }:
			for _, c := range u.Unwrap() {
				w(c)
			}
		}
	}
	w(err)
}

// A fixed-size key, a raw signature, a copied token: [N]byte fields.
type atk2ArrErr struct{ Tok [len(atk2Tok)]byte }

func (e *atk2ArrErr) Error() string { return "denied" }

func TestScrub2ByteArrayField(t *testing.T) {
	ss := Secrets{}.Add(atk2Tok)
	raw := &atk2ArrErr{}
	copy(raw.Tok[:], atk2Tok)
	got := ss.ScrubError(fmt.Errorf("call: %w", raw))
	var a *atk2ArrErr
	if errors.As(got, &a) && string(a.Tok[:]) == atk2Tok {
		t.Fatalf("hole: the token, kept in a [%d]byte field, is read through errors.As", len(a.Tok))
	}
}

// A secret past the 4096 values fieldsTell reads.
type atk2PadErr struct {
	Pad [5000]int
	Tok string
}

func (e *atk2PadErr) Error() string { return "denied" }

func TestScrub2PastValueBudget(t *testing.T) {
	ss := Secrets{}.Add(atk2Tok)
	got := ss.ScrubError(&atk2PadErr{Tok: atk2Tok})
	var a *atk2PadErr
	if errors.As(got, &a) && a.Tok == atk2Tok {
		t.Fatalf("hole: a token kept after 5000 ints is read through errors.As (fieldsTell's value budget ran out and took the tree as clean)")
	}
}

// The same through a linked list: the secret at its end, 1,000,000 nodes on.
type atk2Node struct {
	Next *atk2Node
	Tok  string
}

type atk2ListErr struct{ Head *atk2Node }

func (e *atk2ListErr) Error() string { return "denied" }

func TestScrub2LongListSecretAtEnd(t *testing.T) {
	ss := Secrets{}.Add(atk2Tok)
	head := &atk2Node{}
	n := head
	for range 1_000_000 {
		n.Next = &atk2Node{}
		n = n.Next
	}
	n.Tok = atk2Tok
	start := time.Now()
	got := ss.ScrubError(&atk2ListErr{Head: head})
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("hole: judging a 1,000,000-node list took %v", d)
	}
	var a *atk2ListErr
	if errors.As(got, &a) {
		for n := a.Head; n != nil; n = n.Next {
			if n.Tok == atk2Tok {
				t.Fatalf("hole: a token at the end of a 1,000,000-node list is read through errors.As")
			}
		}
	}
}

// Secrets reflection cannot read: a closure, a channel.
type atk2FuncErr struct{ Reveal func() string }

func (e *atk2FuncErr) Error() string { return "denied" }

type atk2ChanErr struct{ C chan string }

func (e *atk2ChanErr) Error() string { return "denied" }

func TestScrub2ClosureAndChannel(t *testing.T) {
	ss := Secrets{}.Add(atk2Tok)
	tok := strings.Clone(atk2Tok)
	got := ss.ScrubError(fmt.Errorf("call: %w", &atk2FuncErr{Reveal: func() string { return tok }}))
	var f *atk2FuncErr
	if errors.As(got, &f) && f.Reveal() == atk2Tok {
		t.Errorf("hole: a token held by a closure field is learned through errors.As")
	}
	c := make(chan string, 1)
	c <- atk2Tok
	got = ss.ScrubError(fmt.Errorf("call: %w", &atk2ChanErr{C: c}))
	var ch *atk2ChanErr
	if errors.As(got, &ch) {
		select {
		case s := <-ch.C:
			if s == atk2Tok {
				t.Errorf("hole: a token waiting in a channel field is learned through errors.As")
			}
		default:
		}
	}
}

// A wrapper that upper-cases its cause's text: the secret runs across
// the edge, but the cause's text is not found in the wrapper's as is.
type atk2UpperWrap struct {
	prefix string
	err    error
}

func (e *atk2UpperWrap) Error() string { return e.prefix + strings.ToUpper(e.err.Error()) }
func (e *atk2UpperWrap) Unwrap() error { return e.err }

func TestScrub2CaseChangedSplit(t *testing.T) {
	ss := Secrets{}.Add(atk2Tok)
	half := len(atk2Tok) / 2
	raw := &atk2UpperWrap{prefix: "tok=" + strings.ToUpper(atk2Tok[:half]), err: errors.New(atk2Tok[half:] + " rejected")}
	got := ss.ScrubError(raw)
	if l := atk2TextLeak(got, atk2Tok, 12); l != "" {
		t.Fatalf("hole: a part of the token its wrapper's text runs across, in another case, is told: %q", l)
	}
}

// Query-escaped in the wrapper, raw in the cause.
type atk2EscWrap struct {
	prefix string
	err    error
}

func (e *atk2EscWrap) Error() string { return "GET /?t=" + url.QueryEscape(e.prefix+e.err.Error()) }
func (e *atk2EscWrap) Unwrap() error { return e.err }

func TestScrub2EscapedSplit(t *testing.T) {
	ss := Secrets{}.Add(atk2Tok)
	half := len(atk2Tok) / 2
	raw := &atk2EscWrap{prefix: atk2Tok[:half], err: errors.New(atk2Tok[half:])}
	got := ss.ScrubError(raw)
	if l := atk2TextLeak(got, atk2Tok, 12); l != "" {
		t.Fatalf("hole: a part of the token its wrapper's text runs across, escaped there, is told: %q", l)
	}
}

// Escaped as Python's urllib.parse.quote does ('/' kept, '+' and '='
// escaped), or any mix of escaped and raw characters.
func TestScrub2MixedEscape(t *testing.T) {
	ss := Secrets{}.Add(atk2Tok)
	py := strings.NewReplacer("+", "%2B", "=", "%3D").Replace(atk2Tok)
	got := ss.ScrubError(fmt.Errorf("GET https://example.test/cb?t=%s: refused", py))
	if strings.Contains(got.Error(), py) {
		t.Fatalf("hole: the token escaped as urllib.parse.quote does is told: %q", got.Error())
	}
}

// A certificate error whose certificate's names quote the token (a
// hostile server that was sent it before): the copy As gives must not
// keep that certificate.
func TestScrub2CertCopyKeepsCert(t *testing.T) {
	ss := Secrets{}.Add(atk2Tok)
	name := strings.NewReplacer("+", "-", "/", "-", "=", "-", ".", "-").Replace(atk2Tok)
	ss = ss.Add(name)
	cert := &x509.Certificate{DNSNames: []string{name + ".example"}, Subject: pkix.Name{CommonName: name}}
	cases := map[string]error{
		"hostname": x509.HostnameError{Certificate: cert, Host: "h.example"},
		"invalid":  x509.CertificateInvalidError{Cert: cert, Reason: x509.Expired},
		"verify":   &tls.CertificateVerificationError{UnverifiedCertificates: []*x509.Certificate{cert}, Err: errors.New("bad")},
	}
	for k, e := range cases {
		got := ss.ScrubError(fmt.Errorf("GET %s: %w", atk2Tok, e))
		var certs []*x509.Certificate
		var h x509.HostnameError
		var inv x509.CertificateInvalidError
		var v *tls.CertificateVerificationError
		if errors.As(got, &h) {
			certs = append(certs, h.Certificate)
			_ = h.Error()
		}
		if errors.As(got, &inv) {
			certs = append(certs, inv.Cert)
		}
		if errors.As(got, &v) {
			certs = append(certs, v.UnverifiedCertificates...)
		}
		if len(certs) == 0 {
			t.Errorf("%s: errors.As finds no certificate error (decisions rely on it)", k)
		}
		for _, c := range certs {
			if c != nil && (strings.Contains(strings.Join(c.DNSNames, " "), name) || strings.Contains(c.Subject.CommonName, name)) {
				t.Errorf("hole: %s: the copy errors.As gives keeps a certificate naming the token: %v", k, c.DNSNames)
			}
		}
	}
}
