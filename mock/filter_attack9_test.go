package mock_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock"
)

// attack9Serve sends one GET for target (an origin-form path) with the Host
// header host to h, as its server would pass it, and returns the status.
func attack9Serve(t *testing.T, h *mock.Handler, host, target string) int {
	t.Helper()
	r := httptest.NewRequest("GET", target, nil)
	r.Host = host
	r.Header.Set("Authorization", mock.Token("2533274791234567", "1234567890"))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code
}

func attack9Count(t *testing.T, h *mock.Handler, f mock.CallFilter) int {
	t.Helper()
	return len(h.Calls(f))
}

// CallFilter (mock/calls.go): "PathPrefix matches the start of the path,
// both percent-decoded and without regard to case (as the services' paths
// match)". A prefix whose decoded bytes end inside a UTF-8 character
// ("/users/gt(%C3", the first byte of "é") must not match a path whose
// decoded bytes start otherwise ("/users/gt(%E3%82%A2)", "ア": E3 82 A2).
// strings.EqualFold on path[:len(prefix)] reads both cut bytes as
// utf8.RuneError and calls them equal, so `xblcall check --expect
// 'GET profile.xboxlive.com/users/gt(%C3=0'` fails for a call that is not
// to that path.
func TestAttack9FilterPrefixCutCharacterMatchesAnother(t *testing.T) {
	h := mock.Must(mock.New(mock.Config{}))
	attack9Serve(t, h, "profile.xboxlive.com", "/users/gt(%E3%82%A2)/profile/settings?settings=Gamertag")
	if n := attack9Count(t, h, mock.CallFilter{Host: "profile.xboxlive.com"}); n != 1 {
		t.Fatalf("calls recorded: %d, want 1", n)
	}
	for _, prefix := range []string{"/users/gt(%C3", "/users/gt(%FF", "/users/gt(\xc3"} {
		if n := attack9Count(t, h, mock.CallFilter{PathPrefix: prefix}); n != 0 {
			t.Errorf("PathPrefix %q matched %d call(s) to /users/gt(%%E3%%82%%A2)/...: decoded, the path starts with E3, not with the prefix's byte", prefix, n)
		}
	}
	res, err := h.Check(mock.CheckOptions{Expect: []mock.Expectation{{CallFilter: mock.CallFilter{Method: "GET", Host: "profile.xboxlive.com", PathPrefix: "/users/gt(%C3"}, Count: 0}}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK {
		t.Errorf("check --expect 'GET profile.xboxlive.com/users/gt(%%C3=0' failed after a call to gt(ア) only: %v", res.Failures)
	}
}

// CallFilter: "Host matches the host without regard to case or a trailing
// dot." The mock serves hosts by the limits' host matching, which ignores
// ASCII case only (limits.Rule.Hosts: "Matching ignores case and port",
// globMatch: "ignoring ASCII case"): a call to "ſocial.xboxlive.com"
// (U+017F LATIN SMALL LETTER LONG S) is answered 404 NoSuchHost, not by
// the social service. strings.EqualFold folds 'ſ' to 's', so the filter
// for social.xboxlive.com counts it: `--expect social.xboxlive.com=0`
// fails for a call that is not to that host.
func TestAttack9FilterHostUnicodeFoldIsNotTheHost(t *testing.T) {
	h := mock.Must(mock.New(mock.Config{}))
	// Through Handler.RoundTrip, the in-process mock a transport's Base
	// is in tests ("The request's URL host is the Host the mock sees"):
	// net/http's server would refuse a non-ASCII Host with 400 first.
	req, err := http.NewRequest("GET", "https://\u017focial.xboxlive.com/users/me/people", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", mock.Token("2533274791234567", "1234567890"))
	resp, err := h.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if status := resp.StatusCode; status != http.StatusNotFound {
		t.Fatalf("the mock answered %d to ſocial.xboxlive.com; the test assumes it serves no service there (404)", status)
	}
	if n := attack9Count(t, h, mock.CallFilter{Host: "social.xboxlive.com"}); n != 0 {
		t.Errorf("Host social.xboxlive.com matched %d call(s) to ſocial.xboxlive.com, a host the mock does not serve as social", n)
	}
	if n := attack9Count(t, h, mock.CallFilter{Scope: "social"}); n != 0 {
		t.Fatalf("the mock counted the call under social: %d", n)
	}
	// K (U+212A KELVIN SIGN) folds to 'k' as well.
	req, _ = http.NewRequest("GET", "https://\u212Aeys.xboxlive.com/x", nil)
	if resp, err := h.RoundTrip(req); err == nil {
		resp.Body.Close()
	}
	if n := attack9Count(t, h, mock.CallFilter{Host: "keys.xboxlive.com"}); n != 0 {
		t.Errorf("Host keys.xboxlive.com matched %d call(s) to \u212Aeys.xboxlive.com", n)
	}
}

// CallFilter: "PathPrefix matches the start of the path, both
// percent-decoded". The record keeps a call's URI cut to 1 KiB
// (Call.URL: "clipped to 1 KiB"); when the cut falls inside an escape
// ("%4" + "..."), url.PathUnescape of the whole path fails and
// hasPathPrefix compares the path as sent: a call to /%75sers/me/... (the
// path /users/me/..., which the commit's own attack counts: "/users/%6De/…")
// is not matched by PathPrefix "/users/me/", so `--expect
// 'GET profile.xboxlive.com/users/me/=0'` passes after it.
func TestAttack9FilterLongPathCutMidEscapeNotDecoded(t *testing.T) {
	h := mock.Must(mock.New(mock.Config{}))
	head := "/%75sers/me/"
	target := head + strings.Repeat("x", 1019-len(head)) + strings.Repeat("%41", 10)
	attack9Serve(t, h, "profile.xboxlive.com", target)
	short := head + "profile/settings?settings=Gamertag"
	attack9Serve(t, h, "profile.xboxlive.com", short)
	if n := attack9Count(t, h, mock.CallFilter{Host: "profile.xboxlive.com"}); n != 2 {
		t.Fatalf("calls recorded: %d, want 2", n)
	}
	if n := attack9Count(t, h, mock.CallFilter{PathPrefix: "/users/me/"}); n != 2 {
		t.Errorf("PathPrefix /users/me/ matched %d of the 2 calls to /%%75sers/me/... (the short one is matched; the long one, whose record is cut inside an escape, is not)", n)
	}
	res, err := h.Check(mock.CheckOptions{Expect: []mock.Expectation{{CallFilter: mock.CallFilter{Method: "GET", Host: "profile.xboxlive.com", PathPrefix: "/users/me/"}, Count: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.OK {
		t.Errorf("check --expect 'GET profile.xboxlive.com/users/me/=1' passed after two calls there")
	}
}

// held: an ASCII prefix never matches a path whose letters only fold to it
// (the byte lengths differ): "/users/" does not match "/uſers/" or
// "/u%C5%BFers/", and "/x/k" does not match "/x/" + KELVIN SIGN.
func TestAttack9FilterASCIIPrefixNoUnicodeFold(t *testing.T) {
	h := mock.Must(mock.New(mock.Config{}))
	attack9Serve(t, h, "profile.xboxlive.com", "/u%C5%BFers/me/profile/settings")
	attack9Serve(t, h, "profile.xboxlive.com", "/u\u017fers/me/profile/settings")
	attack9Serve(t, h, "profile.xboxlive.com", "/x/%E2%84%AA/y")
	for _, p := range []string{"/users/", "/USERS/", "/x/k", "/x/K/"} {
		if n := attack9Count(t, h, mock.CallFilter{PathPrefix: p}); n != 0 {
			t.Errorf("PathPrefix %q matched %d call(s)", p, n)
		}
	}
}

// held: '%2F' in a prefix is '/' decoded, as the mock's routes read the
// decoded path (net/http's URL.Path): "/users%2Fme/" and "/users/me/"
// both count a call the mock served by its profile route at either
// spelling; and the trailing dot and case of a host still match.
func TestAttack9FilterEncodedSlashAgreesWithRoutes(t *testing.T) {
	h := mock.Must(mock.New(mock.Config{}))
	s1 := attack9Serve(t, h, "PROFILE.xboxlive.com.", "/users%2Fme/profile/settings?settings=Gamertag")
	s2 := attack9Serve(t, h, "profile.xboxlive.com", "/users/me/profile/settings?settings=Gamertag")
	if s1 != s2 {
		t.Logf("statuses differ: %d, %d", s1, s2)
	}
	for _, p := range []string{"/users%2Fme/", "/users/me/", "/USERS%2fME/"} {
		if n := attack9Count(t, h, mock.CallFilter{Host: "profile.xboxlive.com", PathPrefix: p}); n != 2 {
			t.Errorf("PathPrefix %q matched %d of 2", p, n)
		}
	}
}

// held: no filter input panics, and a long prefix over a full record runs
// in linear time (each call is decoded once per filter).
func TestAttack9FilterOddInputsAndTime(t *testing.T) {
	h := mock.Must(mock.New(mock.Config{}))
	attack9Serve(t, h, "profile.xboxlive.com", "/users/me/profile/settings")
	attack9Serve(t, h, "profile.xboxlive.com.", "/")
	for _, f := range []mock.CallFilter{{PathPrefix: "%"}, {PathPrefix: "%%"}, {PathPrefix: "%zz"}, {PathPrefix: "/users/me/profile/settings/and/more"},
		{Host: "."}, {Host: ".."}, {PathPrefix: "\xff\xfe"}, {Host: "\xff"}, {PathPrefix: "/users/%"}, {PathPrefix: "/users/%6"}} {
		_ = h.Calls(f)
	}
	for range 2000 {
		attack9Serve(t, h, "profile.xboxlive.com", "/users/me/"+strings.Repeat("%41", 300))
	}
	long := "/users/me/" + strings.Repeat("a", 200_000)
	start := time.Now()
	for range 5 {
		h.Calls(mock.CallFilter{Host: "profile.xboxlive.com", PathPrefix: long})
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("5 filters of a 200 KB prefix over 2,000 calls took %v", d)
	}
}
