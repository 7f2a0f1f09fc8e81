package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	flag "github.com/spf13/pflag"

	"github.com/xblgo/fgrl/internal/safetext"
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
  xblcall check --mock http://mock:8080 --admin-token "$ADMIN_TOKEN" --certify --json

The mock's admin API does the checking (POST /_fgrl/api/check); this prints
each failure on a line, or the whole verdict with --json, and exits 1 when a
check fails. --certify judges what the mock saw by the trace analyzer's rules
(xblcall analyze), and prints its failing findings.
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
	fs.StringVar(&o.mockURL, "mock", "http://127.0.0.1:8080", "the running mock's address")
	fs.StringVar(&o.token, "admin-token", "", "the mock's admin token, for a mock off this machine")
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
	base, err := checkURL("--mock", o.mockURL)
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
	res, raw, err := o.post(ctx, base.JoinPath(admin.Prefix, "api", "check").String(), opts)
	if err != nil {
		return err
	}
	if o.json {
		e.stdout.Write(raw)
	} else if res.OK {
		fmt.Fprintln(e.stdout, "ok")
	} else {
		for _, f := range res.Failures {
			fmt.Fprintln(e.stdout, safetext.Clip(f, 300))
		}
	}
	if !res.OK {
		return &exitError{1, errors.New("the mock's check failed")}
	}
	return nil
}

// post asks the mock's admin API at endpoint for the verdict.
func (o *checkOpts) post(ctx context.Context, endpoint string, opts mock.CheckOptions) (mock.CheckResult, []byte, error) {
	body, _ := json.Marshal(opts)
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "POST", endpoint, bytes.NewReader(body))
	if err != nil {
		return mock.CheckResult{}, nil, notAURL("--mock", o.mockURL, err)
	}
	if o.token != "" {
		req.Header.Set("Authorization", "Bearer "+o.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		scrubURLs(err)
		return mock.CheckResult{}, nil, fmt.Errorf("the mock at %s: %w", shownURL(o.mockURL), err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return mock.CheckResult{}, nil, fmt.Errorf("the mock's answer: %v", err)
	}
	var res mock.CheckResult
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusUnprocessableEntity || json.Unmarshal(raw, &res) != nil {
		return mock.CheckResult{}, nil, fmt.Errorf("the mock answered %d: %s", resp.StatusCode, safetext.Clip(string(raw), 200))
	}
	return res, raw, nil
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
	x.Host = host
	if hasPath {
		x.PathPrefix = "/" + path
	}
	return x, nil
}
