package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
	flag "github.com/spf13/pflag"

	"github.com/xblgo/fgrl/client"
	"github.com/xblgo/fgrl/hresult"
	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/internal/xblauth"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/transport"
)

func callCommand(e *env) *cobra.Command {
	o := new(callOpts)
	c := &cobra.Command{
		Use:   "call URL",
		Short: "call a service through the fgrl transport, curl-style",
		Example: `  xblcall call --mock https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag
  xblcall call --mock -X POST -d '{"userIds":["1"],"settings":["Gamertag"]}' \
      https://profile.xboxlive.com/users/batch/profile/settings
  XBL_TOKEN='XBL3.0 x=...;...' xblcall call -i -v https://userpresence.xboxlive.com/users/me
  xblcall call --mock -n 20 -c 4 https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag

Standard output carries only the answer's body (so 'xblcall call ... | jq .'
works); -i puts the status line and headers before it. Each retry and each
wait is a line on standard error (-s silences them). A 429 with -i or -v is
printed with its headers and body.

The token comes from --token; else --mock mints one for --xuid/--title; else
the XBL_TOKEN variable; else the stored sign-in (xblcall login), renewed as
it expires. With --mock the request is answered by the embedded mock instead
of the network; with --via http://127.0.0.1:PORT (or XBLCALL_MOCK set to
it) by a mock in another process. Unless -H names one, the
x-xbl-contract-version sent is the typed call's for the host (and, for
leaderboards, the path), as docs/CLIENT.md lists it; 1 for other hosts.

Credentials are kept out of all call prints, even with -v: each the call
sent (its token, the one it was renewed to after a 401, a signature, a
URL's) and, in a load run, each any call of the run sent (of URLs' and of
other calls' signatures, up to a bound) is taken out as sent, in any ASCII
case, URL-escaped, or as JSON encoders escape it (\u003c, \/, \u002B, or
every character but letters and digits as \u00XX). One a service
re-encodes otherwise (base64, every byte percent-encoded), escapes in
another mix, or splits (across lines or headers) is not recognized, and is
printed.

A mock in another process (xblcall mock --addr 127.0.0.1:8080) is reached
by its address, with the service's real name in the Host header and a token
it minted:
  xblcall call -H 'Host: profile.xboxlive.com' \
      --token "$(xblcall token --xuid 2533274791234567 --title 1234567890)" \
      http://127.0.0.1:8080/users/me/profile/settings?settings=Gamertag

Load: -n N sends N calls through one transport (one budget), -c at a time,
starting at most --rate a second, like hey or vegeta. Bodies are read and
dropped; a summary follows (--json for a script): calls served, waits,
calls refused locally by the budget, calls ended by a 429, the service's
429s (retries included), failures, latency percentiles and status codes. On
a terminal a progress bar runs on standard error and is cleared at the end.
Retries are counted, not printed, unless -v.

Exit status: 0 for a 2xx answer (a load run: no call failed with an error;
refusals and 429s are results, not failures), 1 for any other answer or
failure, 2 for a usage error, 130 when interrupted (Ctrl-C).
`,
		RunE: runE(e, o.run),
	}
	c.Flags().AddFlagSet(callFlags(o))
	complete(c, map[string][]string{"request": {"GET", "POST", "PUT", "DELETE"}}, nil, nil)
	return c
}

type callOpts struct {
	method, data, token, xuid, title string
	headers                          headerList
	include, verbose, mock, silent   bool
	json                             bool
	retryWindow, timeout             time.Duration
	policy                           transport.Policy // --max-wait, --fail-fast, --no-retry, --attempt-timeout, --background, --rule
	background                       bool
	load                             loadOpts
	via                              string
	signIn                           *client.SignIn        // the stored sign-in, when it gave the token
	service                          *client.ServiceSignIn // the stored service sign-in, when it gave the token
	signer                           transport.Signer      // signs each attempt with the service's proof key
	serviceBase                      *http.Transport       // the service sign-in's TLS (its CA trusted), for --via
}

// headerList collects repeated -H flags.
type headerList []string

func (h *headerList) String() string     { return strings.Join(*h, ", ") }
func (h *headerList) Set(v string) error { *h = append(*h, v); return nil }
func (h *headerList) Type() string       { return "header" }

func callFlags(o *callOpts) *flag.FlagSet {
	fs := newFlagSet("call")
	fs.StringVarP(&o.method, "request", "X", "", "HTTP method (default GET, or POST with -d)")
	fs.VarP(&o.headers, "header", "H", "extra request header 'Name: value' (repeatable)")
	fs.StringVarP(&o.data, "data", "d", "", "request body; @FILE reads a file, @- standard input")
	fs.BoolVarP(&o.include, "include", "i", false, "print the response status line and headers before the body")
	fs.BoolVarP(&o.verbose, "verbose", "v", false, "trace each attempt, wait and budget decision on stderr")
	fs.BoolVarP(&o.silent, "silent", "s", false, "print no retry or wait lines on stderr")
	fs.DurationVar(&o.retryWindow, "retry-window", transport.DefaultRetryWindow, "retry within this long after the first attempt (XSAPI's window)")
	fs.DurationVar(&o.policy.MaxWait, "max-wait", 0, "wait for the budget or a Retry-After up to this long from the call's start, past the retry window (Policy.MaxWait, at most 5m)")
	fs.BoolVar(&o.policy.FailFast, "fail-fast", false, "never wait: refused locally at once, no retries (Policy.FailFast)")
	fs.BoolVar(&o.policy.NoRetry, "no-retry", false, "send once: no retries; the budget may still hold the call (Policy.NoRetry)")
	fs.DurationVar(&o.policy.AttemptTimeout, "attempt-timeout", 0, "each attempt's timeout (Policy.AttemptTimeout; 0: XSAPI's, 5 to 30 s; at most 5m), and the bound on reading the answer's body (0: 30 s)")
	fs.BoolVar(&o.background, "background", false, "a background call: leaves each limit's interactive share alone (Policy.Priority)")
	fs.StringVar(&o.policy.Rule, "rule", "", "count against the limits rule of this scope (Policy.Rule), not the one the path matches")
	fs.DurationVar(&o.timeout, "timeout", 0, "give up on the whole call after this long (0: the retry window decides)")
	fs.StringVar(&o.token, "token", "", "Authorization value (XBL3.0 x=<userhash>;<token>)")
	fs.BoolVar(&o.mock, "mock", false, "answer with the embedded mock instead of the network")
	fs.StringVar(&o.xuid, "xuid", "2533274791234567", "user for the token --mock mints")
	fs.StringVar(&o.title, "title", "1234567890", "title ID")
	fs.IntVarP(&o.load.n, "requests", "n", 1, "load: send this many calls through one transport and print a summary instead of the body")
	fs.IntVarP(&o.load.c, "concurrency", "c", 1, "load: calls in flight at a time")
	fs.Float64Var(&o.load.rate, "rate", 0, "load: start at most this many calls a second (0: as fast as answered)")
	fs.BoolVar(&o.json, "json", false, "load: print the summary as JSON")
	fs.StringVar(&o.via, "via", "", "send the request to a mock at this loopback address, the URL's host in the Host header (default $"+mockEnv+" unless --mock; not with --mock)")
	return fs
}

func (o *callOpts) run(ctx context.Context, e *env, args []string) error {
	if len(args) != 1 {
		return &exitError{2, errors.New("need exactly one URL")}
	}
	if err := checkIDs(o.xuid, o.title); err != nil {
		return err
	}
	if o.retryWindow <= 0 || o.timeout < 0 || o.policy.MaxWait < 0 || o.policy.AttemptTimeout < 0 {
		return &exitError{2, errors.New("--retry-window must be positive, and --timeout, --max-wait and --attempt-timeout not negative")}
	}
	if o.policy.AttemptTimeout > transport.LongCallTimeout { // it bounds the body's reading too (answerTimeout)
		return &exitError{2, fmt.Errorf("--attempt-timeout %v: at most %v", o.policy.AttemptTimeout, transport.LongCallTimeout)}
	}
	if o.policy.MaxWait > transport.MaxPolicyWait { // the transport would cut it there, unsaid
		return &exitError{2, fmt.Errorf("--max-wait %v: at most %v", o.policy.MaxWait, transport.MaxPolicyWait)}
	}
	if o.mock && o.via != "" {
		return &exitError{2, errors.New("--via sends to a running mock: not with --mock, which answers in-process")}
	}
	if err := o.load.check(); err != nil {
		return &exitError{2, err}
	}
	if o.load.on() && o.include {
		return &exitError{2, errors.New("-i prints one answer: not with -n, -c or --rate")}
	}
	if o.json && !o.load.on() {
		return &exitError{2, errors.New("--json prints a load summary: give -n")}
	}
	if !o.mock { // the embedded mock: no running one
		var from string
		if o.via, from = mockAddr(e, "--via", o.via, ""); o.via != "" {
			if _, err := parseVia(from, o.via); err != nil {
				return err
			}
		}
	}
	if o.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.timeout)
		defer cancel()
	}
	req, body, err := o.request(ctx, e, args[0])
	if err != nil {
		return err
	}
	if o.signer != nil { // every call and attempt signed with the service's proof key
		ctx = transport.WithSigner(ctx, o.signer)
		req = req.WithContext(ctx)
	}
	if o.load.on() {
		var auth func(context.Context) (string, error)
		switch {
		case o.signIn != nil: // each call takes the current token, renewed after a 401
			auth = func(ctx context.Context) (string, error) {
				x, err := o.signIn.XboxToken(ctx)
				return x.Authorization(), err
			}
		case o.service != nil:
			auth = func(ctx context.Context) (string, error) {
				t, err := o.service.Token(ctx, "")
				return t.Authorization, err
			}
		}
		return runLoad(ctx, e, o.transport(e), req, body, auth, o.load, o.json, o.answerTimeout())
	}
	ctx, cancel := context.WithCancel(withSent(ctx)) // ends the answer's body past answerTimeout
	defer cancel()
	req = req.WithContext(ctx)
	resp, err := (&http.Client{Transport: o.transport(e)}).Do(req)
	if err != nil {
		return describe(clientError(req, err)) // before describe writes its message
	}
	defer resp.Body.Close()
	// The bound is on the server's sending the body, not on standard
	// output's taking it (a pager, a slow pipe): the body is read whole
	// (at most 64 MiB, as printed) before it is printed. Past the bound,
	// as many bytes more as the longest credential sent are read, so that
	// one that starts before the cut is whole to scrub (printResponse).
	ss := callSecrets(req)
	bound := bodyBound(ctx, cancel, o.answerTimeout())
	b, err := io.ReadAll(io.LimitReader(resp.Body, int64(maxPrinted+ss.Longest())+1))
	cut := len(b) > maxPrinted
	if cut && err == nil { // a body cut is no answer: its first part is printed, then the error
		err = fmt.Errorf("the answer's body is larger than %d bytes: cut there", maxPrinted)
	}
	return printResponse(e, resp, b, cut, bound(err), o.include || o.verbose && resp.StatusCode == http.StatusTooManyRequests, ss)
}

// maxPrinted bounds the answer's body call reads and prints (a variable
// so that a test may make it small).
var maxPrinted = 64 << 20

// answerTimeout bounds the reading of an answer's body, which the
// transport's attempt timeout does not (it ends with the headers): the
// attempt timeout given, else XSAPI's longest (30 s). A server that
// trickles its body would otherwise hold a call (and each call of a load
// run) for as long as it trickles.
func (o *callOpts) answerTimeout() time.Duration {
	if o.policy.AttemptTimeout > 0 {
		return o.policy.AttemptTimeout
	}
	return 30 * time.Second
}

// bodyBound cancels ctx (the request's, so its body's reads end) after d;
// the function it returns stops the timer and names the bound in err when
// it was reached.
func bodyBound(ctx context.Context, cancel context.CancelFunc, d time.Duration) func(error) error {
	var reached atomic.Bool
	t := time.AfterFunc(d, func() { reached.Store(true); cancel() })
	return func(err error) error {
		t.Stop()
		if err != nil && reached.Load() {
			return fmt.Errorf("the answer's body took longer than %v (--attempt-timeout): %w", d, err)
		}
		return err
	}
}

// request builds the request from the flags; body is its body, nil for none.
func (o *callOpts) request(ctx context.Context, e *env, url string) (req *http.Request, body []byte, err error) {
	body, err = o.body(e)
	if err != nil {
		return nil, nil, err
	}
	method := o.method
	if method == "" {
		method = "GET"
		if body != nil {
			method = "POST"
		}
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	if _, err := checkURL("the URL", url); err != nil {
		return nil, nil, err
	}
	req, err = http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return nil, nil, &exitError{2, err}
	}
	for i, h := range o.headers {
		k, v, ok := strings.Cut(h, ":")
		if !ok || !headerNameOK(strings.TrimSpace(k)) {
			// Not even the name is shown: without a ':' or a name, what
			// the text holds is unknown, and may be a credential.
			return nil, nil, &exitError{2, fmt.Errorf("-H #%d is not 'Name: value' with a header name (letters, digits and !#$%%&'*+-.^_`|~); "+
				"its text is not shown, as it may hold a credential", i+1)}
		}
		if strings.EqualFold(strings.TrimSpace(k), "Host") {
			req.Host = strings.TrimSpace(v) // net/http sends req.Host, not a Host header
			continue
		}
		req.Header.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	if body != nil && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json; charset=utf-8")
	}
	if req.Header.Get("x-xbl-contract-version") == "" {
		req.Header.Set("x-xbl-contract-version", contractVersion(req))
	}
	switch tok := o.tokenValue(e); {
	case tok != "":
		req.Header.Set("Authorization", tok)
	case req.Header.Get("Authorization") == "":
		if !xblauth.ServiceHost(req.URL.Host) { // the stored token is for Xbox services only
			return nil, nil, &exitError{2, fmt.Errorf("the stored sign-in's token is sent only to Xbox service hosts "+
				"(%s and its subdomains), not %q: give --token to send a token there", xblauth.ServiceDomain, safetext.Clip(req.URL.Host, 100))}
		}
		var told io.Writer = e.stderr // a wait for the sign-in's lock is a wait line
		if o.silent {
			told = nil
		}
		tok, err := o.storedToken(ctx, e, told)
		if err != nil {
			return nil, nil, err
		}
		req.Header.Set("Authorization", tok)
	}
	return req, body, nil
}

// contractVersion is the x-xbl-contract-version call sends to req's host
// (its Host header when given, else its URL's) when -H names none: the
// typed call's (client.ContractVersion), else 1.
func contractVersion(req *http.Request) string {
	host := req.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if v, ok := client.ContractVersion(host, req.URL.EscapedPath()); ok {
		return v
	}
	return "1"
}

// sameVia reports whether two mock addresses name one mock: the same
// scheme, host and port, whatever else they say; "" is none.
func sameVia(a, b string) bool {
	if a == "" || b == "" {
		return a == b
	}
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	return err1 == nil && err2 == nil && strings.EqualFold(ua.Scheme, ub.Scheme) && strings.EqualFold(ua.Host, ub.Host)
}

// storedToken signs in with the stored sign-in (xblcall login), whose mock
// address, if it has one, the call then goes to; a call given another
// address is refused.
func (o *callOpts) storedToken(ctx context.Context, e *env, stderr io.Writer) (string, error) {
	st, err := loadSignIn(e)
	if errors.Is(err, errNotSignedIn) {
		return "", &exitError{2, errors.New("no token: use --token, XBL_TOKEN, --mock or xblcall login")}
	}
	if err != nil {
		return "", err
	}
	switch {
	case o.via == "":
		o.via = st.Via
	case !sameVia(o.via, st.Via):
		// A sign-in's tokens go only where it was made: the real services'
		// to them, a mock's to that mock, never to an address given since
		// (a $XBLCALL_MOCK left set from a mock session).
		where := "the Microsoft and Xbox services"
		if st.Via != "" {
			where = shownURL(st.Via)
		}
		return "", &exitError{2, fmt.Errorf("the stored sign-in was made with %s, not %s: its tokens go only there; "+
			"give --token, or sign in again with --via (or unset %s)", where, shownURL(o.via), mockEnv)}
	}
	if st.Service != nil {
		if o.service, o.serviceBase, err = st.Service.serviceSignIn(o.via); err != nil {
			return "", err
		}
		t, err := o.service.Token(ctx, "")
		if err != nil {
			return "", err
		}
		o.signer = client.SignWith(t.Key, client.DefaultSignaturePolicy())
		return t.Authorization, nil
	}
	hc, err := viaClient(o.via)
	if err != nil {
		return "", err
	}
	o.signIn = st.signIn(ctx, e, hc, stderr)
	x, err := o.signIn.XboxToken(ctx)
	if err != nil {
		return "", err
	}
	return x.Authorization(), nil
}

func (o *callOpts) tokenValue(e *env) string {
	switch {
	case o.token != "":
		return o.token
	case o.mock: // the embedded mock accepts only its own tokens: XBL_TOKEN would be refused
		return mock.Token(o.xuid, o.title)
	case e.getenv("XBL_TOKEN") != "":
		return e.getenv("XBL_TOKEN")
	}
	return ""
}

func (o *callOpts) body(e *env) ([]byte, error) {
	const max = 16 << 20
	var r io.Reader
	switch {
	case o.data == "":
		return nil, nil
	case o.data == "@-":
		r = e.stdin
	case strings.HasPrefix(o.data, "@"):
		f, err := os.Open(o.data[1:])
		if err != nil {
			return nil, &exitError{2, fmt.Errorf("-d: %w", err)}
		}
		defer f.Close()
		r = f
	default:
		return []byte(o.data), nil
	}
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err == nil && len(b) > max {
		err = fmt.Errorf("request body over %d bytes", max)
	}
	return b, err
}

func (o *callOpts) transport(e *env) *transport.Transport {
	var base http.RoundTripper = http.DefaultTransport
	switch {
	case o.mock:
		base = mock.NewHandler()
	case o.via != "" && o.serviceBase != nil:
		base, _ = viaTransport(o.via, o.serviceBase)
	case o.via != "":
		base, _ = viaTransport(o.via, http.DefaultTransport) // checked in run
	}
	if o.background {
		o.policy.Priority = transport.Background
	}
	t := &transport.Transport{Base: base, TitleID: o.title, RetryWindow: o.retryWindow, Policy: o.policy,
		Raw429: !o.load.on() && (o.include || o.verbose)} // a 429 is then printed with its headers and body
	switch { // a 401: sign in again, once for all the calls refused with the same token
	case o.signIn != nil:
		t.RefreshToken = o.signIn.RefreshToken
	case o.service != nil:
		t.RefreshToken = o.service.RefreshToken
	}
	tr := &tracer{base: base}
	if o.verbose {
		tr.w = e.stderr
	}
	t.Base = tr
	if !o.silent && (!o.load.on() || o.verbose) { // a load run counts retries in its summary
		t.Logger = slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{
			ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
				if a.Key == slog.TimeKey {
					return slog.Attr{}
				}
				return a
			},
		}))
	}
	return t
}

// clientError is err, an http.Client's for req, as call prints it: its
// URLs as shownURL shows them (scrubURLs) and the credentials req's call
// sent (callSecrets: its token, whatever its source, and the token the
// transport renewed it to) taken out wherever its text tells them:
// net/http's error quotes the last redirect's Location, and a service may
// redirect to a URL that echoes the token.
func clientError(req *http.Request, err error) error {
	ss := callSecrets(req)
	scrubURLs(err, ss) // scrubbed before shownURL clips them
	return ss.ScrubError(err)
}

// describe turns a failed call into its one-line reason.
func describe(err error) error {
	var te *transport.ThrottleError
	if errors.As(err, &te) {
		who := "throttled by the service (request was sent)"
		if te.Local {
			who = "refused locally by the budget (no request sent)"
			if te.Sent {
				who = "refused locally after earlier attempts were sent"
			}
		}
		return fmt.Errorf("%v: %s; Retry-After %v", te.HRESULT(), who, te.Wait)
	}
	return fmt.Errorf("%v: %w", hresult.Of(err), err)
}

// printResponse prints resp, whose body is body (read before; when cut,
// the body goes on past it and only its first maxPrinted bytes are
// printed) and the error that ended its reading, readErr: what came is
// printed, then the error. Its status line, headers and body are scrubbed
// of ss, the call's credentials (callSecrets), before they are clipped.
func printResponse(e *env, resp *http.Response, body []byte, cut bool, readErr error, include bool, ss xblauth.Secrets) error {
	if include {
		fmt.Fprintf(e.stdout, "%s %s\n", safetext.Clip(resp.Proto, 16), safetext.Clip(shownStatus(resp.Status, ss), 100))
		for _, k := range slices.Sorted(maps.Keys(resp.Header)) {
			fmt.Fprintf(e.stdout, "%s: %s\n", safetext.Clip(ss.Scrub(headerName(k)), 100), safetext.Clip(ss.Scrub(strings.Join(resp.Header[k], ", ")), 1000))
		}
		fmt.Fprintln(e.stdout)
	}
	// The body as it came, but a credential the call sent, which a
	// service may echo: tokens are never printed.
	shown := string(body)
	if cut {
		shown, _ = ss.ScrubCut(shown, maxPrinted)
	} else {
		shown = ss.Scrub(shown)
	}
	if _, err := io.WriteString(e.stdout, shown); err != nil {
		return err
	}
	if readErr != nil {
		return readErr
	}
	fmt.Fprintln(e.stdout)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("HTTP %d (%v)", resp.StatusCode, hresult.FromStatus(resp.StatusCode))
	}
	return nil
}

// headerNameOK reports whether k is a header's name: one or more of
// RFC 9110's token characters.
func headerNameOK(k string) bool {
	if k == "" {
		return false
	}
	for _, c := range []byte(k) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// shownStatus is a status line as printed: scrubbed of the call's
// credentials (ss), and of any run that looks like one
// (safetext.HideOpaque: a reason phrase has no use for one, and a token
// echoed in pieces is no whole secret to find).
func shownStatus(status string, ss xblauth.Secrets) string {
	return safetext.HideOpaque(ss.Scrub(status))
}

// spelled are header names as the services and their documents spell
// them, where Go's canonical form differs (it reads "Ratelimit").
var spelled = map[string]string{"Ratelimit": "RateLimit", "Ratelimit-Policy": "RateLimit-Policy", "Ms-Cv": "MS-CV"}

// headerName is a received header's name as the services spell it.
func headerName(k string) string {
	if s, ok := spelled[k]; ok {
		return s
	}
	return k
}
