package mock_test

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/mock/admin"
)

// RELIABILITY.md (the second publisher attack, held): "odd filter inputs
// do not panic, and 200 KB prefixes over 2,000 calls run in linear time";
// the held test's own words: "a long prefix over a full record runs in
// linear time (each call is decoded once per filter)". mock.Handler.Calls
// matches under the journal's lock ("outside the lock, which every request
// takes", calls.go).
//
// hasPathPrefix decodes the prefix again for every call of the record
// (unescape(prefix), an allocation of its length each time), though no
// record's path (cut to 1 KiB) can hold a prefix that long: a prefix with
// one '%' costs calls × its length where the same prefix without it costs
// a length check per call. One admin GET /_fgrl/api/calls?path=%25aaaa…
// (a query under net/http's 1 MiB of headers) over a full record (10,000
// calls) holds the journal's lock for seconds, and every request to the
// mock waits for it.
func TestAttack9bFilterEscapedLongPrefixStallsTheMock(t *testing.T) {
	h := mock.Must(mock.New(mock.Config{}))
	for range 5_000 { // with a 2 MB prefix: 10 GB decoded under the lock before the fix
		attack9Serve(t, h, "profile.xboxlive.com", "/users/me/profile/settings")
	}
	api := admin.Handler(h, admin.Config{})
	query := "/_fgrl/api/calls?host=profile.xboxlive.com&path=%25" + strings.Repeat("a", 2_000_000)
	done := make(chan time.Duration, 1)
	go func() {
		start := time.Now()
		w := httptest.NewRecorder()
		r := httptest.NewRequest("GET", query, nil)
		r.Host, r.RemoteAddr = "127.0.0.1:8080", "127.0.0.1:50000"
		api.ServeHTTP(w, r)
		if w.Code != 200 {
			t.Errorf("admin GET: %d %.200s", w.Code, w.Body.String())
		}
		done <- time.Since(start)
	}()
	time.Sleep(200 * time.Millisecond)
	start := time.Now()
	attack9Serve(t, h, "profile.xboxlive.com", "/users/me/profile/settings")
	served := time.Since(start)
	took := <-done
	if served > 2*time.Second || took > 3*time.Second {
		t.Errorf("an admin GET of the calls with a 2 MB path prefix holding '%%' took %v; a request to the mock sent meanwhile waited %v", took, served)
	}
}

// held: the filter's decoding agrees with the path as sent for '+' (a
// literal plus in a path), escapes in either case, a prefix holding '%25'
// (a literal '%', decoded once, never twice) and a stray '%'.
func TestAttack9bFilterPlusCaseAndPercent(t *testing.T) {
	h := mock.Must(mock.New(mock.Config{}))
	attack9Serve(t, h, "profile.xboxlive.com", "/users/gt(a+b)/profile/settings")
	attack9Serve(t, h, "profile.xboxlive.com", "/users/gt(a%2541)/profile/settings")
	attack9Serve(t, h, "profile.xboxlive.com", "/users/gt(%c3%a9)/profile/settings")
	for _, c := range []struct {
		prefix string
		want   int
	}{
		{"/users/gt(a+b)", 1}, {"/users/gt(a%2Bb)", 1}, {"/users/gt(a%2bb)", 1}, {"/users/gt(a b)", 0}, {"/users/gt(a%20b)", 0},
		{"/users/gt(a%2541)", 1}, {"/users/gt(a%25", 1}, {"/users/gt(aA)", 0}, {"/users/gt(a%41)", 0},
		{"/users/gt(%C3%A9)", 1}, {"/users/gt(%c3%A9)", 1}, {"/users/gt(\u00e9)", 1}, {"/users/gt(%C3%89)", 0},
	} {
		if n := len(h.Calls(mock.CallFilter{Host: "profile.xboxlive.com", PathPrefix: c.prefix})); n != c.want {
			t.Errorf("PathPrefix %q matched %d, want %d", c.prefix, n, c.want)
		}
	}
}
