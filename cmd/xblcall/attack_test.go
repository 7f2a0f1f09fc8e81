package main

import (
	"strings"
	"testing"
)

// Attacks on xblcall's input checks by an outside reviewer: secrets the
// command line holds must never be printed, whatever is wrong with it.
// Each case fails on the code as it stands.

// secretNotPrinted runs xblcall with args and fails t when its output
// holds secret.
func secretNotPrinted(t *testing.T, args []string, secret string) {
	t.Helper()
	code, out, errs := xblcall(t, args...)
	if strings.Contains(out+errs, secret) {
		t.Errorf("xblcall %q (exit %d) printed %q:\n%s%s", args, code, secret, out, errs)
	}
}

// TestAttackRedisPasswordInParseError: url.Parse's "invalid port" error
// quotes the text after the last ':' of the authority, which is the
// password when it holds '/', '?' or '#' (common in generated passwords:
// the authority ends there), and parseError keeps that part of the error,
// so "--redis: not a URL: invalid port \":hunter2\" after host" is printed.
func TestAttackRedisPasswordInParseError(t *testing.T) {
	for _, tc := range []struct{ name, url, secret string }{
		{"a password with '/'", "redis://:hunter2-SECRET/x@127.0.0.1:6379/0", "hunter2-SECRET"},
		{"a password with '#'", "redis://default:pw-SECRET#x@127.0.0.1:6379/0", "pw-SECRET"},
		{"a password with '?'", "rediss://default:pw-SECRET?x@127.0.0.1:6379/0", "pw-SECRET"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			secretNotPrinted(t, []string{"mock", "--redis", tc.url, "--hosts"}, tc.secret)
		})
	}
}

// TestAttackSecretsNeverPrinted: a password in a URL (check --mock, the
// call's URL) and a token (in a call's query, in a -H value) are printed
// by some error and trace paths:
//   - check --mock: a connection failure prints the --mock URL raw;
//   - call -v: the tracer prints req.URL, userinfo and query whole;
//   - call: a usage error quotes u.Redacted(), which hides the password
//     but not an access_token in the query;
//   - call -H: a header without ':' is quoted whole.
func TestAttackSecretsNeverPrinted(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		secret string
	}{
		{"check --mock: a password, nobody listening", []string{"check", "--no-429", "--mock", "http://admin:s3cret-SECRET@127.0.0.1:1"}, "s3cret-SECRET"},
		{"call -v: the URL's password", []string{"call", "--mock", "-v",
			"https://u:s3cret-SECRET@profile.xboxlive.com/users/me/profile/settings?settings=Gamertag"}, "s3cret-SECRET"},
		{"call -v: a token in the query", []string{"call", "--mock", "-v",
			"https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag&access_token=tok-SECRET"}, "tok-SECRET"},
		{"call: a token in the query of a URL out of bounds", []string{"call", "--token", "x",
			"https://profile.xboxlive.com:99999/users/me?access_token=tok-SECRET"}, "tok-SECRET"},
		{"call -H: a header without ':'", []string{"call", "--mock", "-H", "Authorization XBL3.0 x=1;tok-SECRET",
			"https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag"}, "tok-SECRET"},
	} {
		t.Run(tc.name, func(t *testing.T) { secretNotPrinted(t, tc.args, tc.secret) })
	}
}
