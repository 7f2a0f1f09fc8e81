package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	flag "github.com/spf13/pflag"

	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/internal/xblauth"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/mock/admin"
)

func checkCommand(e *env) *cobra.Command {
	o := new(checkOpts)
	c := &cobra.Command{
		Use:   "check",
		Short: "assert what a running mock saw: no 429s, certification, call counts (exit 1 on failure)",
		Example: `  xblcall check --no-429 --certify                 # after a test run against xblcall mock
  xblcall check --expect 'GET userpresence.xboxlive.com/users/=3'
  XBLCALL_ADMIN_TOKEN=... xblcall check --mock http://mock:8080 --certify --json
  XBLCALL_MOCK=http://mock:8080 xblcall check --no-429   # the mock's address for check, call and login

The mock's admin API does the checking (POST /_fgrl/api/check); this prints
each failure on a line, or the whole verdict with --json, and exits 1 when a
check fails. --certify judges what the mock saw by the trace analyzer's rules
(xblcall analyze), and prints its failing findings. An --expect's HOST
matches without regard to case or a trailing dot (a scheme or port is
refused: the mock records neither), and its PATH prefix the path as served,
percent-decoded and without regard to case.
`,
		RunE: runE(e, o.run),
	}
	c.Flags().AddFlagSet(checkFlags(o))
	return c
}

type checkOpts struct {
	mockURL, token, since string
	no429, certify, json  bool
	expect                []string
}

func checkFlags(o *checkOpts) *flag.FlagSet {
	fs := newFlagSet("check")
	fs.StringVar(&o.mockURL, "mock", "", "the running mock's address (default $"+mockEnv+", else http://127.0.0.1:8080)")
	fs.StringVar(&o.token, "admin-token", "", "the mock's admin token, for a mock off this machine (default $"+adminTokenEnv+", which keeps it out of the process list)")
	fs.BoolVar(&o.no429, "no-429", false, "fail when any call was answered 429")
	fs.BoolVar(&o.certify, "certify", false, "fail when the trace analyzer's rules fail what the mock saw")
	fs.StringArrayVar(&o.expect, "expect", nil, "fail unless N calls match: '[METHOD ]HOST[/PATH prefix]=N' (repeatable)")
	fs.StringVar(&o.since, "since", "", "judge only the calls since this RFC 3339 time")
	fs.BoolVar(&o.json, "json", false, "print the verdict as JSON (with the analyzer's report under --certify)")
	return fs
}

func (o *checkOpts) run(ctx context.Context, e *env, args []string) error {
	if len(args) > 0 {
		return &exitError{2, errors.New("check takes no arguments")}
	}
	if o.token == "" {
		o.token = e.getenv(adminTokenEnv)
	}
	var from string
	o.mockURL, from = mockAddr(e, "--mock", o.mockURL, "http://127.0.0.1:8080")
	base, err := checkURL(from, o.mockURL)
	if err != nil {
		return err
	}
	opts := mock.CheckOptions{No429: o.no429, Certify: o.certify}
	if !o.no429 && !o.certify && len(o.expect) == 0 {
		return &exitError{2, errors.New("name a check: --no-429, --certify or --expect")}
	}
	for _, s := range o.expect {
		x, err := parseExpect(s)
		if err != nil {
			return &exitError{2, err}
		}
		opts.Expect = append(opts.Expect, x)
	}
	if o.since != "" {
		t, err := time.Parse(time.RFC3339Nano, o.since)
		if err != nil {
			return &exitError{2, fmt.Errorf("--since %s is not an RFC 3339 time", safetext.Quote(o.since, 40))}
		}
		opts.Since = t
	}
	res, status, raw, err := o.post(ctx, base.JoinPath(admin.Prefix, "api", "check").String(), opts)
	if err != nil {
		return err
	}
	why := o.doubt(status, res)
	if o.json {
		if res.OK && why != "" { // the JSON printed says no pass, as the exit code does
			v := res
			v.OK, v.Failures = false, append(slices.Clip(res.Failures), "xblcall check: the mock's verdict cannot be taken as a pass: "+why)
			raw, _ = json.Marshal(v)
		}
		io.WriteString(e.stdout, o.redactJSON(raw))
	} else if res.OK && why == "" {
		fmt.Fprintln(e.stdout, "ok")
	} else {
		for _, f := range res.Failures {
			fmt.Fprintln(e.stdout, safetext.Clip(o.redact(f), 300))
		}
	}
	if !res.OK {
		return &exitError{1, errors.New("the mock's check failed")}
	}
	if why != "" { // fail closed: a pass must be one whole
		return &exitError{1, errors.New("the mock's verdict cannot be taken as a pass: " + why)}
	}
	return nil
}

// doubt says why an answer that reads "ok" is no pass: its status is not
// 200, it lists failures or no list of them, or --certify has no green or
// yellow report of at least one call; "" when it is one.
func (o *checkOpts) doubt(status int, res mock.CheckResult) string {
	switch {
	case status != http.StatusOK:
		return fmt.Sprintf("it answered %d with ok", status)
	case len(res.Failures) > 0:
		return fmt.Sprintf("it answered ok with %d failures", len(res.Failures))
	case res.Failures == nil: // the mock's verdict always lists them ([]): this is some other server's {"ok":true}
		return "its answer lists no failures, not even none: it is no mock's verdict"
	case o.certify && res.Report == nil:
		return "--certify, and it sent no report"
	case o.certify && res.Report.Verdict != "green" && res.Report.Verdict != "yellow":
		return "--certify, and its report's verdict is " + safetext.Quote(o.redact(res.Report.Verdict), 20) // redacted, then cut: a cut token is no longer found
	case o.certify && res.Report.Calls == 0:
		return "--certify, and it saw no calls to certify"
	}
	return ""
}

// post asks the mock's admin API at endpoint for the verdict.
func (o *checkOpts) post(ctx context.Context, endpoint string, opts mock.CheckOptions) (mock.CheckResult, int, []byte, error) {
	body, _ := json.Marshal(opts)
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "POST", endpoint, bytes.NewReader(body))
	if err != nil {
		return mock.CheckResult{}, 0, nil, notAURL("--mock", o.mockURL, err)
	}
	if o.token != "" {
		req.Header.Set("Authorization", "Bearer "+o.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		scrubURLs(err, nil)
		return mock.CheckResult{}, 0, nil, fmt.Errorf("the mock at %s: %w", shownURL(o.mockURL), err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return mock.CheckResult{}, 0, nil, fmt.Errorf("the mock's answer: %v", err)
	}
	var res mock.CheckResult
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusUnprocessableEntity || json.Unmarshal(raw, &res) != nil || !verdictKeys(raw) {
		excerpt := o.redact(string(raw)) // a server that echoes the request must not print the admin token
		return mock.CheckResult{}, 0, nil, fmt.Errorf("the mock answered %d: %s", resp.StatusCode, safetext.Clip(excerpt, 200))
	}
	return res, resp.StatusCode, raw, nil
}

// redact is s without the admin token, given as --admin-token or in
// --mock's query (?token=), in any form a server may echo it
// (xblauth.Secrets: as given, URL- or JSON-escaped).
func (o *checkOpts) redact(s string) string {
	ss := xblauth.Secrets{}.Add(o.token)
	if u, err := url.Parse(o.mockURL); err == nil {
		for _, tok := range u.Query()["token"] {
			ss = ss.Add(tok)
		}
	}
	return ss.Scrub(s)
}

// redactJSON is the JSON value raw with the admin token taken out of
// every string and key as a JSON reader (jq) decodes it, encoded again
// (keys in order): a server may escape the token in a mix of its own
// (every character \uXXXX), which redact, reading the bytes, would not
// recognize. A raw that does not decode is redacted as text.
func (o *checkOpts) redactJSON(raw []byte) string {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return o.redact(string(raw))
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case string:
			return o.redact(v)
		case []any:
			for i := range v {
				v[i] = walk(v[i])
			}
		case map[string]any:
			m := make(map[string]any, len(v))
			for k, x := range v {
				m[o.redact(k)] = walk(x)
			}
			return m
		}
		return v
	}
	b, err := json.Marshal(walk(v))
	if err != nil {
		return o.redact(string(raw))
	}
	return string(b) + "\n"
}

// verdictKeys reports whether a verdict's keys are spelt as the mock
// spells them: Go matches "OK" or "Ok" to "ok" too, and takes the last,
// where another reader (jq) takes "ok" itself, so such an answer could pass
// here and read as a failure there, or the reverse.
func verdictKeys(raw []byte) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return false
	}
	for k := range m {
		for _, want := range []string{"ok", "failures", "report"} {
			if k != want && strings.EqualFold(k, want) {
				return false
			}
		}
	}
	return true
}

// parseExpect reads '[METHOD ]HOST[/PATH prefix]=N'.
func parseExpect(s string) (mock.Expectation, error) {
	bad := fmt.Errorf("--expect %s: want '[METHOD ]HOST[/PATH prefix]=N', such as 'GET userpresence.xboxlive.com/users/=3'", safetext.Quote(s, 80))
	spec, count, ok := strings.Cut(s, "=")
	n, err := strconv.Atoi(strings.TrimSpace(count))
	if !ok || err != nil || n < 0 {
		return mock.Expectation{}, bad
	}
	var x mock.Expectation
	x.Count = n
	spec = strings.TrimSpace(spec)
	if m, rest, ok := strings.Cut(spec, " "); ok {
		x.Method, spec = m, strings.TrimSpace(rest)
	}
	host, path, hasPath := strings.Cut(spec, "/")
	if host == "" || strings.ContainsAny(host, " \t") {
		return mock.Expectation{}, bad
	}
	if strings.Contains(host, ":") { // a URL's scheme, or a port: the record has neither, so the filter would match nothing
		return mock.Expectation{}, fmt.Errorf("--expect %s: HOST is a host name, without a scheme or port, such as 'GET userpresence.xboxlive.com/users/=3'", safetext.Quote(s, 80))
	}
	x.Host = host
	if hasPath {
		x.PathPrefix = "/" + path
	}
	return x, nil
}
