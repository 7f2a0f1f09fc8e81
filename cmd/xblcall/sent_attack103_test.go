package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/mock/tlsca"
)

// attack103Svc is a hostile service (atk.xboxlive.com) behind the mock, which
// signs in: it answers the first token it sees in a run 401 (so that the
// transport renews it) and hands every later request to echo with the
// first token and the one the request carries.
type attack103Svc struct {
	mu    sync.Mutex
	first string
	seen  []string // every distinct token (and signature) seen, in order
	reqs  int
	echo  func(w http.ResponseWriter, r *http.Request, first, tok string)
	// whole, when set, answers every request itself (no 401 first).
	whole func(w http.ResponseWriter, r *http.Request, tok string, n int)
	srv   *httptest.Server
}

func (s *attack103Svc) note(x string) {
	if x != "" && !attack103Contains(s.seen, x) {
		s.seen = append(s.seen, x)
	}
}

func attack103Contains(ss []string, x string) bool {
	for _, s := range ss {
		if s == x {
			return true
		}
	}
	return false
}

func (s *attack103Svc) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, tok, _ := strings.Cut(r.Header.Get("Authorization"), ";")
	s.mu.Lock()
	s.reqs++
	n := s.reqs
	s.note(tok)
	s.note(r.Header.Get("Signature"))
	if s.first == "" {
		s.first = tok
	}
	first, echo, whole := s.first, s.echo, s.whole
	s.mu.Unlock()
	if whole != nil {
		whole(w, r, tok, n)
		return
	}
	if tok == first {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	echo(w, r, first, tok)
}

func (s *attack103Svc) reset(echo func(w http.ResponseWriter, r *http.Request, first, tok string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.first, s.seen, s.reqs, s.echo, s.whole = "", nil, 0, echo, nil
}

func (s *attack103Svc) tokens() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}

// attack103Start starts the service in front of an in-process mock and signs in
// through it (xblcall login --via).
func attack103Start(t *testing.T) *attack103Svc {
	t.Helper()
	setConfigDir(t, t.TempDir())
	setenv(t, "XBL_TOKEN", "")
	setenv(t, "XBLCALL_MOCK", "")
	h := mock.NewHandler()
	s := &attack103Svc{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Host == "atk.xboxlive.com" {
			s.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(s.srv.Close)
	if code, out, errs := xblcall(t, "login", "--via", s.srv.URL); code != 0 {
		t.Fatalf("login: exit %d %s %s", code, out, errs)
	}
	return s
}

// attack103Call runs call against the service with args.
func (s *attack103Svc) call(t *testing.T, args ...string) (int, string) {
	t.Helper()
	all := append(append([]string{"call", "--via", s.srv.URL, "--retry-window", "1s", "--max-wait", "0s"}, args...), "https://atk.xboxlive.com/users/me")
	// A writer safe for concurrent use, as os.Stderr is: -c 8 -v traces
	// from 8 goroutines (xblcall's bytes.Buffer would race in the test).
	var out, errs syncBuffer
	code := run(context.Background(), all, &out, &errs, withTestEnv(t))
	return code, out.String() + "\n--stderr--\n" + errs.String()
}

// attack103Find returns where out holds probe (in any ASCII case), -1 for nowhere.
func attack103Find(out, probe string) int {
	if len(probe) < 8 {
		return -1
	}
	return strings.Index(strings.ToLower(out), strings.ToLower(probe))
}

func attack103Around(out string, i, n int) string {
	return out[max(i-80, 0):min(i+n+20, len(out))]
}

type attack103Form struct {
	name string
	enc  func(tok string) string // the form the service echoes; "" for none
}

func attack103JSONEscaped(s string) string { // '.' (and '-', '_') as \u00XX, as an ASCII-escaping encoder may
	var b strings.Builder
	for _, c := range []byte(s) {
		if c == '.' || c == '-' || c == '_' {
			fmt.Fprintf(&b, `\u%04x`, c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// attack103EchoRun answers the renewed request with what place writes for each
// token (first and renewed) in form f, runs call with args, and returns
// the tokens seen and the output.
func attack103EchoRun(t *testing.T, s *attack103Svc, place func(w http.ResponseWriter, r *http.Request, xs []string), args ...string) ([]string, string, int) {
	t.Helper()
	s.reset(func(w http.ResponseWriter, r *http.Request, first, tok string) { place(w, r, []string{first, tok}) })
	code, out := s.call(t, args...)
	toks := s.tokens()
	if len(toks) < 2 {
		t.Errorf("%v: exit %d: no renewal (tokens seen %d): %.400s", args, code, len(toks), out)
	}
	return toks, out, code
}

// held: call --help: "Tokens are never printed, even with -v"; sent.go:
// "the credentials of each of its attempts as the transport sent them (its
// token, renewed after a 401, ...) ... A service may echo any of them in a
// later answer"; Scrub: "in any case of its ASCII letters". After a 401
// and a renewal the service echoes both tokens, each inside a longer word,
// upper-cased, lower-cased, URL-query-escaped, Go-JSON-escaped, in a
// header, a Set-Cookie, a WWW-Authenticate, a Location, the body, a
// trailer and the status line's reason phrase: -i, -v and -i -v print
// neither token.
func TestAttack103SentEchoFormsHeld(t *testing.T) {
	s := attack103Start(t)
	forms := []attack103Form{
		{"word", func(x string) string { return "abc" + x + "xyz" }},
		{"upper", strings.ToUpper},
		{"lower", strings.ToLower},
		{"json", func(x string) string { b, _ := json.Marshal(x); return string(b) }},
	}
	places := map[string]func(f attack103Form) func(w http.ResponseWriter, r *http.Request, xs []string){
		"header": func(f attack103Form) func(w http.ResponseWriter, r *http.Request, xs []string) {
			return func(w http.ResponseWriter, r *http.Request, xs []string) {
				for i, x := range xs {
					w.Header().Add(fmt.Sprintf("X-Echo-%d", i), f.enc(x))
					w.Header().Add("Set-Cookie", "s"+fmt.Sprint(i)+"="+f.enc(x)+"; Path=/")
					w.Header().Add("WWW-Authenticate", "XBL3.0 x="+f.enc(x))
				}
				w.Header().Set("Location", "/r/"+f.enc(xs[1]))
				w.WriteHeader(http.StatusBadRequest)
			}
		},
		"body": func(f attack103Form) func(w http.ResponseWriter, r *http.Request, xs []string) {
			return func(w http.ResponseWriter, r *http.Request, xs []string) {
				w.WriteHeader(http.StatusBadRequest)
				fmt.Fprintf(w, `{"first":"%s","renewed":"%s"}`, f.enc(xs[0]), f.enc(xs[1]))
			}
		},
		"trailer": func(f attack103Form) func(w http.ResponseWriter, r *http.Request, xs []string) {
			return func(w http.ResponseWriter, r *http.Request, xs []string) {
				w.Header().Set("Trailer", "X-T0, X-T1")
				w.WriteHeader(http.StatusBadRequest)
				fmt.Fprint(w, "body")
				w.(http.Flusher).Flush()
				w.Header().Set("X-T0", f.enc(xs[0]))
				w.Header().Set("X-T1", f.enc(xs[1]))
			}
		},
		"reason": func(f attack103Form) func(w http.ResponseWriter, r *http.Request, xs []string) {
			return func(w http.ResponseWriter, r *http.Request, xs []string) {
				c, brw, err := w.(http.Hijacker).Hijack()
				if err != nil {
					return
				}
				defer c.Close()
				fmt.Fprintf(brw, "HTTP/1.1 400 Bad %s and %s\r\nContent-Length: 2\r\nConnection: close\r\n\r\nno", f.enc(xs[0]), f.enc(xs[1]))
				brw.Flush()
			}
		},
	}
	for pname, place := range places {
		for _, f := range forms {
			for _, args := range [][]string{{"-i"}, {"-v"}, {"-i", "-v"}, {}} {
				toks, out, code := attack103EchoRun(t, s, place(f), args...)
				for _, tok := range toks {
					if i := attack103Find(out, tok); i >= 0 {
						t.Errorf("%s %s %v: exit %d: a token printed: %q", pname, f.name, args, code, attack103Around(out, i, len(tok)))
					}
				}
			}
		}
	}
}

// BREAK. call --help: "Standard output carries only the answer's body (so
// 'xblcall call ... | jq .' works) ... Tokens are never printed, even with
// -v"; Add: "the forms ... a JSON answer does (encoding/json writes <, >
// and & as \u003c ...) ... Other encoders than Go's". The mock's token
// holds '.', '-' or '_'; a service whose JSON encoder escapes them
// (\u002e; valid JSON, and what jq prints back as the token itself) echoes
// the renewed token in the body: call prints it unscrubbed, and the
// documented `| jq .` pipe then prints the token verbatim.
func TestAttack103SentEchoJSONUnicodeEscaped(t *testing.T) {
	s := attack103Start(t)
	toks, out, code := attack103EchoRun(t, s, func(w http.ResponseWriter, r *http.Request, xs []string) {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"first":"%s","renewed":"%s"}`, attack103JSONEscaped(xs[0]), attack103JSONEscaped(xs[1]))
	}, "-i")
	for _, tok := range toks {
		if attack103JSONEscaped(tok) == tok {
			continue
		}
		if i := attack103Find(out, attack103JSONEscaped(tok)); i >= 0 {
			// What jq (or any JSON reader) makes of the printed body.
			body := out[strings.Index(out, "\r\n\r\n")+1:]
			if j := strings.Index(out, "\n\n"); j >= 0 {
				body = out[j+2:]
			}
			body, _, _ = strings.Cut(body, "\n--stderr--")
			var v map[string]string
			decoded := ""
			if json.Unmarshal([]byte(strings.TrimSpace(body)), &v) == nil {
				decoded = v["first"] + " " + v["renewed"]
			}
			t.Errorf("exit %d: a token printed JSON-escaped (%q); decoded by a JSON reader: holds the token %v", code, attack103Around(out, i, len(attack103JSONEscaped(tok))), strings.Contains(decoded, tok))
		}
	}
}

// held: call --help: "each [credential] the call sent ... is taken out as
// sent, in any ASCII case, URL-escaped, or as JSON encoders escape it
// (\u003c, \/, \u002B, or every character but letters and digits as
// \u00XX). One a service re-encodes otherwise (base64, every byte
// percent-encoded) ... is not recognized, and is printed".
// From TestAttack103SentEchoEncoded (attack 231), which found the renewed token
// printed percent-encoded byte by byte and in base64, as the help now says.
// The service echoes both tokens in each form the help names, in a
// Location, a header each and the body: -i prints none of them.
func TestAttack103SentEchoEncoded(t *testing.T) {
	s := attack103Start(t)
	forms := []attack103Form{
		{"as sent", func(x string) string { return x }},
		{"upper", strings.ToUpper},
		{"query-escaped", url.QueryEscape},
		{"path-escaped", url.PathEscape},
		{"json", func(x string) string { b, _ := json.Marshal(x); return string(b[1 : len(b)-1]) }},
		{`json \/`, func(x string) string { return strings.ReplaceAll(x, "/", `\/`) }},
		{`json \u002B`, func(x string) string { return strings.ReplaceAll(x, "+", `\u002B`) }},
		{"json all escaped", func(x string) string {
			var b strings.Builder
			for _, c := range []byte(x) {
				if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
					b.WriteByte(c)
				} else {
					fmt.Fprintf(&b, `\u%04X`, c)
				}
			}
			return b.String()
		}},
	}
	toks, out, code := attack103EchoRun(t, s, func(w http.ResponseWriter, r *http.Request, xs []string) {
		var loc, body []string
		for i, f := range forms {
			for _, x := range xs {
				w.Header().Add(fmt.Sprintf("X-Echo-%d", i), f.enc(x))
				loc = append(loc, f.enc(x))
				body = append(body, f.enc(x))
			}
		}
		w.Header().Set("Location", "/r/"+strings.Join(loc, "/"))
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `["%s"]`, strings.Join(body, `","`)) // as the encoder wrote each form
	}, "-i")
	for _, tok := range toks {
		for _, f := range forms {
			// -i prints a header's '\' as "\\" (safetext.Clip).
			for _, printed := range []string{f.enc(tok), strings.ReplaceAll(f.enc(tok), `\`, `\\`)} {
				if i := attack103Find(out, printed); i >= 0 {
					t.Errorf("exit %d: a token printed %s: %q", code, f.name, attack103Around(out, i, len(printed)))
				}
			}
		}
	}
}

// held: call --help: "each [credential] the call sent ... is taken out as
// sent ... One a service ... splits (across lines or headers) is not
// recognized, and is printed".
// From TestAttack103SentEchoSplitAcrossHeaders (attack 231), which found the
// renewed token's two halves printed in two headers, as the help now says.
// The renewed token echoed whole in X-A, then in X-B (the other header
// holding its first half): -i prints it in neither.
func TestAttack103SentEchoSplitAcrossHeaders(t *testing.T) {
	s := attack103Start(t)
	for _, whole := range []string{"X-A", "X-B"} {
		toks, out, code := attack103EchoRun(t, s, func(w http.ResponseWriter, r *http.Request, xs []string) {
			w.Header().Set("X-A", xs[1][:len(xs[1])/2])
			w.Header().Set("X-B", xs[1][:len(xs[1])/2])
			w.Header().Set(whole, xs[1])
			w.WriteHeader(http.StatusBadRequest)
		}, "-i")
		for _, tok := range toks {
			if i := attack103Find(out, tok); i >= 0 {
				t.Errorf("%s: exit %d: a token printed whole: %q", whole, code, attack103Around(out, i, len(tok)))
			}
		}
	}
}

// BREAK. Scrub: "Scrub before clipping: a clipped text may hold a
// secret's first part only"; call --help: "Tokens are never printed". A
// 1 MiB + body (maxPrinted set to 1 MiB, as its comment allows a test to)
// whose renewed token starts len(token)-1 bytes before the cut: call cuts
// the body first and scrubs the cut text, in which the token is no longer
// whole, so all of the token but its last byte is printed.
func TestAttack103SentBodyClipPrintsTokenPrefix(t *testing.T) {
	old := maxPrinted
	maxPrinted = 1 << 20
	t.Cleanup(func() { maxPrinted = old })
	s := attack103Start(t)
	for _, args := range [][]string{{"-i"}, {}} {
		toks, out, code := attack103EchoRun(t, s, func(w http.ResponseWriter, r *http.Request, xs []string) {
			tok := xs[1]
			w.WriteHeader(http.StatusOK)
			fmt.Fprint(w, strings.Repeat("a", maxPrinted-(len(tok)-1))+tok+strings.Repeat("b", 100))
		}, args...)
		if len(toks) < 2 {
			continue
		}
		tok := toks[len(toks)-1]
		if i := attack103Find(out, tok[:len(tok)-1]); i >= 0 {
			t.Errorf("%v: exit %d: the renewed token's first %d of %d bytes printed at the cut: ...%q", args, code, len(tok)-1, len(tok), attack103Around(out, i, len(tok)))
		}
	}
}

// BREAK. call --help: "Tokens are never printed, even with -v"; sent.go:
// "Each output of a call is scrubbed of them: ... a load run's first
// error". A load run (-n 8, -c 1, --json and text): the service answers
// call 3's first attempt 401 (token renewed to T2, which calls 3 to 5
// send), call 5's 401 again (renewed to T3), and then call 7, which sent
// T3 only, a redirect loop whose Location names T2 (a token of the run,
// from another call's record): the first error, in the summary, --json's
// firstError and the exit message, prints T2 whole, and so does -v's
// request line of each redirect.
func TestAttack103SentLoadOtherCallsToken(t *testing.T) {
	s := attack103Start(t)
	for _, args := range [][]string{{"-n", "8", "--json"}, {"-n", "8"}, {"-n", "8", "-v"}} {
		var mu sync.Mutex
		var order []string // distinct tokens, in order
		calls := 0
		s.reset(nil)
		s.mu.Lock()
		s.whole = func(w http.ResponseWriter, r *http.Request, tok string, n int) {
			mu.Lock()
			if tok != "" && !attack103Contains(order, tok) { // a redirected request carries none
				order = append(order, tok)
			}
			if r.URL.Path == "/users/me" { // calls and their retries
				calls++
			}
			c, ord := calls, append([]string(nil), order...)
			mu.Unlock()

			switch {
			case strings.HasPrefix(r.URL.Path, "/r/"):
				http.Redirect(w, r, r.URL.Path+"x", http.StatusFound)
			case (c == 3 && len(ord) == 1) || (c == 6 && len(ord) == 2): // call 3's and call 5's first attempts (request 3, request 6)
				w.WriteHeader(http.StatusUnauthorized)
			case c >= 9 && len(ord) >= 2: // call 7 on (request 9 on, sent with T3): a redirect naming T2
				http.Redirect(w, r, "/r/"+ord[1]+"/", http.StatusFound)
			default:
				w.WriteHeader(http.StatusOK)
			}
		}
		s.mu.Unlock()
		code, out := s.call(t, args...)
		mu.Lock()
		toks := append([]string(nil), order...)
		mu.Unlock()
		if len(toks) < 3 {
			t.Errorf("%v: exit %d: %d tokens seen, want 3 (two renewals): %.600s", args, code, len(toks), out)
		}
		for k, tok := range toks {
			if i := attack103Find(out, tok); i >= 0 {
				t.Errorf("%v: exit %d: token T%d of %d printed: %q", args, code, k+1, len(toks), attack103Around(out, i, len(tok)))
			}
			for _, line := range strings.Split(out, "\n") {
				if strings.HasPrefix(line, "> ") && strings.Contains(line, tok) {
					t.Errorf("%v: -v trace line prints token T%d: %.200q", args, k+1, line)
					break
				}
			}
		}
	}
}

// held: call --help: "'call' signs in again from them and sign every
// request with the proof key ... Tokens are never printed, even with -v";
// sent.go: "the credentials of each of its attempts as the transport sent
// them (... a signature)". login --service against an in-process mock
// behind a hostile HTTPS service: the service answers the first signed
// attempt 401 and the retry (after the renewal: a new Signature; the
// mock's service X-token came back the same) 400 echoing
// every token and signature it saw in headers, a Set-Cookie, the body and
// a Location, or redirects in a loop naming them: -i, -v, plain and -n 3
// --json print none of them.
func TestAttack103SentSignerSignatureEcho(t *testing.T) {
	setConfigDir(t, t.TempDir())
	setenv(t, "XBL_TOKEN", "")
	setenv(t, "XBLCALL_MOCK", "")
	ca, err := tlsca.New()
	if err != nil {
		t.Fatal(err)
	}
	h := mock.NewHandler()
	cfg, err := ca.TLSConfig(h.Hosts())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	caFile, partner := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "partner.pem")
	os.WriteFile(caFile, ca.CertPEM(), 0o644)
	certPEM, keyPEM, err := ca.IssuePartner(tlsca.Partner{Name: "fgrl-mock-backend"})
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(partner, append(certPEM, keyPEM...), 0o600)

	var mu sync.Mutex
	var seen []string
	isSig := map[string]bool{}
	reqs, mode := 0, "echo"
	svc := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, tok, _ := strings.Cut(r.Header.Get("Authorization"), ";")
		sig := r.Header.Get("Signature")
		mu.Lock()
		for _, x := range []string{tok, sig} {
			if x != "" && !attack103Contains(seen, x) {
				seen = append(seen, x)
			}
		}
		if sig != "" {
			isSig[sig] = true
		}
		reqs++
		first, all, m := reqs == 1, append([]string(nil), seen...), mode
		mu.Unlock()
		if first && !strings.HasPrefix(r.URL.Path, "/r/") {
			w.Header().Set("X-Sig", sig)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if m == "loop" {
			http.Redirect(w, r, "/r/"+strings.Join(all, "/"), http.StatusFound)
			return
		}
		for i, x := range all {
			w.Header().Add(fmt.Sprintf("X-Echo-%d", i), x)
			w.Header().Add("Set-Cookie", fmt.Sprintf("c%d=%s", i, x))
		}
		w.Header().Set("Location", "/r/"+all[len(all)-1])
		w.WriteHeader(http.StatusBadRequest)
		json.NewEncoder(w).Encode(all)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Host == "atk.xboxlive.com" {
			svc.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})}
	go srv.Serve(tls.NewListener(ln, cfg))
	t.Cleanup(func() { srv.Close() })
	via := "https://" + ln.Addr().String()
	if code, out, errs := xblcall(t, "login", "--service", "--cert", partner, "--key", partner, "--via", via, "--ca", caFile); code != 0 {
		t.Fatalf("login --service: exit %d %s %s", code, out, errs)
	}
	for _, tc := range []struct {
		mode string
		args []string
	}{
		{"echo", []string{"-i"}}, {"echo", []string{"-v"}}, {"echo", []string{"-i", "-v"}},
		{"loop", nil}, {"loop", []string{"-v"}}, {"loop", []string{"-n", "3", "--json"}},
	} {
		mu.Lock()
		seen, reqs, mode = nil, 0, tc.mode
		mu.Unlock()
		args := append(append([]string{"call", "--retry-window", "1s", "--max-wait", "0s"}, tc.args...), "https://atk.xboxlive.com/users/me")
		code, out, errs := xblcall(t, args...)
		mu.Lock()
		all := append([]string(nil), seen...)
		sigs := 0
		for _, x := range all {
			if isSig[x] {
				sigs++
			}
		}
		mu.Unlock()
		t.Logf("%s %v: exit %d, %d credentials seen, %d of them signatures", tc.mode, tc.args, code, len(all), sigs)
		if len(all) < 3 || sigs == 0 {
			t.Errorf("%s %v: exit %d: %d credentials seen (want a renewal and signatures): %.300s %.300s", tc.mode, tc.args, code, len(all), out, errs)
		}
		for _, x := range all {
			if i := attack103Find(out+errs, x); i >= 0 {
				t.Errorf("%s %v: exit %d: a credential the call sent printed: %q", tc.mode, tc.args, code, attack103Around(out+errs, i, len(x)))
			}
		}
	}
}

// held: call --help: "-n N sends N calls through one transport ... -c at a
// time ... Tokens are never printed"; sent: "Safe for concurrent use".
// -n 50 -c 8 with the service answering a token 401 every 12th request
// (renewals mid-run, several calls refused with one token) and every 5th
// request a redirect loop echoing the token that request carried (in the
// path and a query): no data race (run with -race), the run ends, and no
// token is printed, -v or --json. (A loop naming another call's token is
// TestAttack103SentLoadOtherCallsToken's break.)
func TestAttack103SentLoadConcurrentRenewals(t *testing.T) {
	s := attack103Start(t)
	for _, args := range [][]string{{"-n", "50", "-c", "8", "--json"}, {"-n", "50", "-c", "8", "-v"}} {
		var mu sync.Mutex
		var order []string
		refused := map[string]bool{}
		s.reset(nil)
		s.mu.Lock()
		s.whole = func(w http.ResponseWriter, r *http.Request, tok string, n int) {
			mu.Lock()
			if tok != "" && !attack103Contains(order, tok) { // a redirected request carries none
				order = append(order, tok)
			}
			all := append([]string(nil), order...)
			refuse := n%12 == 0 && !refused[tok]
			if refuse {
				refused[tok] = true
			}
			mu.Unlock()
			switch {
			case refuse:
				w.WriteHeader(http.StatusUnauthorized)
			case strings.HasPrefix(r.URL.Path, "/r/"):
				http.Redirect(w, r, r.URL.Path+"x", http.StatusFound)
			case n%5 == 0: // the call's own token, and a query naming it
				_ = all
				http.Redirect(w, r, "/r/"+tok+"/?t="+tok, http.StatusFound)
			default:
				w.WriteHeader(http.StatusOK)
			}
		}
		s.mu.Unlock()
		start := time.Now()
		code, out := s.call(t, args...)
		mu.Lock()
		toks := append([]string(nil), order...)
		mu.Unlock()
		t.Logf("%v: exit %d in %v, %d tokens: %.400s", args, code, time.Since(start), len(toks), out[max(len(out)-400, 0):])
		if len(toks) < 2 {
			t.Errorf("%v: no renewal mid-run: %.500s", args, out)
		}
		for k, tok := range toks {
			if i := attack103Find(out, tok); i >= 0 {
				t.Errorf("%v: exit %d: token %d of %d printed: %q", args, code, k+1, len(toks), attack103Around(out, i, len(tok)))
			}
		}
	}
}

// held: sent.go: callSecrets "returns every credential the call has sent
// so far", kept per call; URLSecrets: "maxQuerySecrets bounds the
// credentials URLSecrets takes from a URL's query ... so that scrubbing an
// error stays linear in it"; net/http stops after 10 redirects. A service
// redirecting 10 times, each to a new URL with a new 64 KiB query (64
// access_token pairs of base64 with '+', '/' and '='): the call ends, its
// record has a bounded number of entries and bytes (measured through the
// tracer with withSent), and call -v's output stays clipped.
func TestAttack103SentRedirectsBounded(t *testing.T) {
	hops := 0
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hops++
		n := hops
		mu.Unlock()
		var q strings.Builder
		for i := range 64 {
			if i > 0 {
				q.WriteByte('&')
			}
			v := strings.Repeat(fmt.Sprintf("A+b/%04d=%03d", n, i), 1000/13)
			fmt.Fprintf(&q, "access_token%d=%s", i, v)
		}
		for q.Len() < 64<<10 {
			q.WriteString("&pad=" + strings.Repeat("p", 200))
		}
		http.Redirect(w, r, fmt.Sprintf("/hop%d?%s", n, q.String()), http.StatusFound)
	}))
	defer srv.Close()

	// The record as the tracer keeps it.
	ctx := withSent(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/start", nil)
	req.Header.Set("Authorization", "XBL3.0 x=1;"+strings.Repeat("T", 2000))
	cl := &http.Client{Transport: &tracer{base: http.DefaultTransport}, CheckRedirect: func(r *http.Request, via []*http.Request) error {
		if h := r.URL.Hostname(); h != "127.0.0.1" && h != "localhost" {
			return http.ErrUseLastResponse
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}}
	start := time.Now()
	resp, err := cl.Do(req)
	if resp != nil {
		resp.Body.Close()
	}
	took := time.Since(start)
	ss := callSecrets(req)
	bytes := 0
	for _, x := range ss {
		bytes += len(x)
	}
	t.Logf("redirect chain: %v, err %v; record %d entries, %d bytes, in %v", resp != nil, err != nil, len(ss), bytes, took)
	if err == nil {
		t.Errorf("the chain did not stop")
	}
	// 11 URLs, 64 pairs each, each value and its unescaped form with at
	// most 13 forms: the bound the code implies.
	if len(ss) > 11*64*2*13+20 || bytes > 64<<20 {
		t.Errorf("record unbounded: %d entries, %d bytes", len(ss), bytes)
	}
	if took > 20*time.Second {
		t.Errorf("the chain took %v", took)
	}

	// The CLI: call -v and plain end, output clipped.
	mu.Lock()
	hops = 0
	mu.Unlock()
	for _, args := range [][]string{{"-v"}, {}, {"-n", "3", "-c", "3", "--json"}} {
		start := time.Now()
		all := append(append([]string{"call", "--via", srv.URL, "--token", "XBL3.0 x=1;" + strings.Repeat("T", 60), "--retry-window", "1s"}, args...), "https://atk.xboxlive.com/start")
		code, out, errs := xblcall(t, all...)
		t.Logf("%v: exit %d in %v, stdout %d bytes, stderr %d bytes", args, code, time.Since(start), len(out), len(errs))
		if code == 0 || len(out)+len(errs) > 64<<10 || time.Since(start) > 60*time.Second {
			t.Errorf("%v: exit %d, %d+%d bytes printed in %v: %.300s", args, code, len(out), len(errs), time.Since(start), errs)
		}
		if strings.Contains(out+errs, "A+b/0") {
			t.Errorf("%v: a query credential printed", args)
		}
	}
}
