package main

import (
	"strings"
	"testing"
)

// TestBadInputsExit2: numbers, title IDs, addresses and URLs out of their
// bounds are usage errors: exit 2, one line naming the flag and the bound,
// before anything listens or connects, and never a password of the URL.
// Before, a plan of 2^63-1 calls every 1 ns printed negative peaks and
// "ok", --error-rate NaN and --legacy 12x served, a port of 99999 failed
// with exit 1 (mock, check, login; call after retrying it for 10 s), and
// a malformed --redis URL was printed with its password.
func TestBadInputsExit2(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		want string // the whole of stderr
	}{
		{"plan: 2^63-1 calls every 1 ns", []string{"limits", "plan", "social:1ns:9223372036854775807"},
			"xblcall limits plan: limits: plan: call 0: an interval of 1ns: want 1ms to 168h0m0s"},
		{"plan: an interval near 2^63 ns", []string{"limits", "plan", "social:2562047h47m16.854775807s"},
			"xblcall limits plan: limits: plan: call 0: an interval of 2562047h47m16.854775807s: want 1ms to 168h0m0s"},
		{"plan: a count past the highest limit", []string{"limits", "plan", "social:10s:100001"},
			"xblcall limits plan: limits: plan: call 0: a count of 100001: want 1 to 100000 calls a tick"},
		{"plan: a count past 64 bits", []string{"limits", "plan", "social:10s:99999999999999999999"},
			`xblcall limits plan: "social:10s:99999999999999999999": want SCOPE:EVERY[:COUNT], EVERY 1ms to 168h0m0s and COUNT 1 to 100000, such as social:10s or presence/read:5s:3`},
		{"plan: a peak past a billion calls", []string{"limits", "plan", "social:1ms:100000"},
			`xblcall limits plan: limits: plan: scope "social": its calls in the busiest 5m1s window pass 1000000000, the most a plan may make`},
		{"mock: --error-rate NaN", []string{"mock", "--error-rate", "NaN", "--hosts"},
			"xblcall mock: mock: fault rates must be fractions from 0 to 1 adding up to at most 1 (error NaN, reset 0, truncate 0)"},
		{"mock: --error-rate +Inf", []string{"mock", "--error-rate", "+Inf", "--hosts"},
			"xblcall mock: mock: fault rates must be fractions from 0 to 1 adding up to at most 1 (error +Inf, reset 0, truncate 0)"},
		{"mock: --reset-rate -0.1", []string{"mock", "--reset-rate", "-0.1", "--hosts"},
			"xblcall mock: mock: fault rates must be fractions from 0 to 1 adding up to at most 1 (error 0, reset -0.1, truncate 0)"},
		{"mock: --error-rate 1.5", []string{"mock", "--error-rate", "1.5", "--hosts"},
			"xblcall mock: mock: fault rates must be fractions from 0 to 1 adding up to at most 1 (error 1.5, reset 0, truncate 0)"},
		{"mock: --legacy not a title ID", []string{"mock", "--legacy", "1234567890,12x", "--hosts"},
			`xblcall mock: --legacy: "12x" is not a title ID (a decimal number that fits in 32 bits, with no leading zero)`},
		{"mock: --legacy past 32 bits", []string{"mock", "--legacy", "4294967296", "--hosts"},
			`xblcall mock: --legacy: "4294967296" is not a title ID (a decimal number that fits in 32 bits, with no leading zero)`},
		{"mock: --addr port 99999", []string{"mock", "--addr", "127.0.0.1:99999"},
			`xblcall mock: --addr "127.0.0.1:99999": the port must be a number from 0 to 65535`},
		{"mock: --addr without a port", []string{"mock", "--addr", "127.0.0.1"},
			`xblcall mock: --addr "127.0.0.1": want HOST:PORT, such as 127.0.0.1:8080`},
		{"mock: --addr with a bad host", []string{"mock", "--addr", "local host:8080"},
			`xblcall mock: --addr "local host:8080": the host must be an IP address or a host name (letters, digits, '-', '_' and '.')`},
		{"mock: --https port -1", []string{"mock", "--addr", "127.0.0.1:0", "--https", "127.0.0.1:-1"},
			`xblcall mock: --https "127.0.0.1:-1": the port must be a number from 0 to 65535`},
		{"mock: --redis port 99999, password kept", []string{"mock", "--addr", "127.0.0.1:0", "--redis", "redis://u:s3cret@127.0.0.1:99999/0"},
			`xblcall mock: --redis: the address "127.0.0.1:99999": the port must be a number from 1 to 65535`},
		{"mock: --redis malformed, password kept", []string{"mock", "--redis", "redis://u:s3cret@127.0.0.1:bad/0", "--hosts"},
			`xblcall mock: --redis: not a URL: the port is not a number`},
		{"mock: --redis with a password of digits and '/', password kept", []string{"mock", "--redis", "redis://u:123/s3cret@127.0.0.1:6379/0", "--hosts"},
			`xblcall mock: --redis: not a Redis URL: want redis://[[USER]:PASSWORD@]HOST:PORT[/DB] or rediss://... ` +
				`(a '/', '?', '#' or '@' in a user name or password must be percent-encoded)`},
		{"call: the URL's port 99999", []string{"call", "--token", "x", "http://127.0.0.1:99999/users/me"},
			`xblcall call: the URL "http://127.0.0.1:99999/users/me": the port must be a number from 1 to 65535`},
		{"call: the URL without a scheme", []string{"call", "--mock", "127.0.0.1:8080/users/me"},
			"xblcall call: the URL: not a URL: want a scheme, such as https://"},
		{"call: --via port 0, password kept", []string{"call", "--token", "x", "--via", "http://u:s3cret@127.0.0.1:0", "https://profile.xboxlive.com/users/me"},
			`xblcall call: --via "http://127.0.0.1:0": the port must be a number from 1 to 65535`},
		{"login: --via port 99999", []string{"login", "--via", "http://127.0.0.1:99999"},
			`xblcall login: --via "http://127.0.0.1:99999": the port must be a number from 1 to 65535`},
		{"check: --mock port 99999", []string{"check", "--no-429", "--mock", "http://127.0.0.1:99999"},
			`xblcall check: --mock "http://127.0.0.1:99999": the port must be a number from 1 to 65535`},
		{"check: --mock ftp", []string{"check", "--no-429", "--mock", "ftp://127.0.0.1:21"},
			`xblcall check: --mock "ftp://127.0.0.1:21": the scheme must be http or https`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := xblcall(t, tc.args...)
			if code != 2 || errs != tc.want+"\n" || out != "" {
				t.Errorf("xblcall %q: exit %d, stdout %q\n got %q\nwant %q (exit 2)", tc.args, code, out, errs, tc.want+"\n")
			}
			if strings.Contains(out+errs, "s3cret") {
				t.Errorf("xblcall %q printed the URL's password", tc.args)
			}
		})
	}
}

// TestCheckAddrAndURL: the bounds of addresses and URLs, and the
// well-formed ones taken.
func TestCheckAddrAndURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		addr   string
		listen bool
		ok     bool
	}{
		{"127.0.0.1:8080", true, true},
		{":0", true, true},
		{"[::1]:65535", true, true},
		{"[fe80::1%lo]:80", true, true},
		{"localhost:1", false, true},
		{"redis.internal.:6379", false, true},
		{"my_redis:6379", false, true},
		{":6379", false, false},
		{"127.0.0.1:0", false, false},
		{"127.0.0.1:65536", true, false},
		{"127.0.0.1:+80", true, false},
		{"127.0.0.1:http", true, false},
		{"127.0.0.1: 80", true, false},
		{"a..b:80", true, false},
		{".:80", true, false},
		{strings.Repeat("a", 254) + ":80", true, false},
		{"\x1b[2J:80", true, false},
	} {
		if err := checkAddr("--addr", tc.addr, tc.listen); (err == nil) != tc.ok {
			t.Errorf("checkAddr(%q, listen %v) = %v, want ok %v", tc.addr, tc.listen, err, tc.ok)
		}
	}
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"https://profile.xboxlive.com/users/me", true},
		{"http://127.0.0.1:8080", true},
		{"http://[::1]:1/x", true},
		{"https://profile.xboxlive.com:0/", false},
		{"https://profile.xboxlive.com:65536/", false},
		{"https:///users/me", false},
		{"http://a%20b/", false},
		{"file:///etc/passwd", false},
		{"//profile.xboxlive.com/users/me", false},
	} {
		if _, err := checkURL("the URL", tc.url); (err == nil) != tc.ok {
			t.Errorf("checkURL(%q) = %v, want ok %v", tc.url, err, tc.ok)
		}
	}
}

// secretNotPrinted runs xblcall with args and fails t when its output
// holds secret.
func secretNotPrinted(t *testing.T, args []string, secret string) {
	t.Helper()
	code, out, errs := xblcall(t, args...)
	if strings.Contains(out+errs, secret) {
		t.Errorf("xblcall %q (exit %d) printed %q:\n%s%s", args, code, secret, out, errs)
	}
}

// TestMalformedRedisURLPrintsNoPassword: url.Parse's "invalid port" error
// quotes the text after the last ':' of the authority, which is the
// password when it holds '/', '?' or '#' (common in generated passwords:
// the authority ends there); xblcall says what is wrong in its own words
// (urlProblem), quoting nothing of the URL.
func TestMalformedRedisURLPrintsNoPassword(t *testing.T) {
	t.Parallel()
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

// TestSecretsNeverPrinted: a password in a URL (check --mock, the call's
// URL) and a token (in a call's query, in a -H value) are printed by no
// error or trace path: every URL xblcall prints goes through shownURL (no
// user info, the query's credentials REDACTED), net/http's errors too
// (scrubURLs), and a -H that is not 'Name: value' is named by its place,
// never quoted:
//   - check --mock: a connection failure;
//   - call -v: the trace of each attempt;
//   - call: a usage error for a URL out of bounds;
//   - call -H: a header without ':', or with a name that is not one.
func TestSecretsNeverPrinted(t *testing.T) {
	t.Parallel()
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
		{"call -H: a header whose name is not one", []string{"call", "--mock", "-H", "Authorization XBL3.0 x=1;tok-SECRET:x",
			"https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag"}, "tok-SECRET"},
		{"call -v: a credential in a header named like one", []string{"call", "--mock", "-v", "-H", "X-Api-Key: key-SECRET",
			"https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag"}, "key-SECRET"},
		{"call: nobody listening, a token in the query", []string{"call", "--token", "x", "--no-retry",
			"http://u:s3cret-SECRET@127.0.0.1:1/users/me?access_token=tok-SECRET"}, "SECRET"},
		{"check --mock: a token in the query, nobody listening", []string{"check", "--no-429", "--mock", "http://127.0.0.1:1/?access_token=tok-SECRET"}, "tok-SECRET"},
	} {
		t.Run(tc.name, func(t *testing.T) { secretNotPrinted(t, tc.args, tc.secret) })
	}
}
