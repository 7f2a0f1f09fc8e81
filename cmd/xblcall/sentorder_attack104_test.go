package main

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// call --help: "Credentials are kept out of all call prints, even with
// -v: each the call sent ... and, in a load run, each any call of the run
// sent ... is taken out as sent". A load run (-n 3, -c 1): call 1 renews
// T1 to T2 after a 401, call 2 renews T2 to T3, and call 3 (sent T3 only)
// is redirected first to ?access_token=zzzzzzzz<T2's first byte> (a URL
// credential of call 3's own, which its record lists before the run's
// tokens) and then in a loop whose path is zzzzzzzz<T2>: the first error
// names that path. Scrub replaces the access_token value first, which
// eats T2's first byte, and T2 is then no longer found: all of T2 but its
// first byte is printed.
// Broke before the fix: Scrub replaced secrets one after another.
func TestAttack104SentOverlapEatsTokenStart(t *testing.T) {
	s := attack103Start(t)
	for _, args := range [][]string{{"-n", "3", "--json"}, {"-n", "3"}, {"-n", "3", "-v"}} {
		var mu sync.Mutex
		var order []string
		calls := 0
		s.reset(nil)
		s.mu.Lock()
		s.whole = func(w http.ResponseWriter, r *http.Request, tok string, n int) {
			mu.Lock()
			if tok != "" && !attack103Contains(order, tok) {
				order = append(order, tok)
			}
			if r.URL.Path == "/users/me" && r.URL.RawQuery == "" {
				calls++
			}
			c, ord := calls, append([]string(nil), order...)
			mu.Unlock()
			switch {
			case strings.HasPrefix(r.URL.Path, "/r/"):
				http.Redirect(w, r, r.URL.Path+"x", http.StatusFound)
			case r.URL.Path == "/users/me" && r.URL.RawQuery != "" && len(ord) >= 2:
				http.Redirect(w, r, "/r/zzzzzzzz"+ord[1]+"/", http.StatusFound)
			case (c == 1 && len(ord) == 1) || (c == 3 && len(ord) == 2): // call 1's and call 2's first attempts
				w.WriteHeader(http.StatusUnauthorized)
			case c >= 5 && len(ord) >= 3: // call 3
				http.Redirect(w, r, "/users/me?access_token="+url.QueryEscape("zzzzzzzz"+ord[1][:1]), http.StatusFound)
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
			continue
		}
		t2 := toks[1]
		if i := attack103Find(out, t2[1:]); i >= 0 {
			t.Errorf("%v: exit %d: call --help promises \"Credentials are kept out of all call prints, even with -v: ... in a load run, each any call of the run sent ... is taken out as sent\"; "+
				"the run's renewed token T2 (%d bytes), echoed raw after zzzzzzzz, is printed but for its first byte (%d bytes of it): %q",
				args, code, len(t2), len(t2)-1, strings.ReplaceAll(attack103Around(out, i, len(t2)-1), t2[1:], "<T2 but its first byte>"))
		}
		for k, tok := range toks {
			if i := attack103Find(out, tok); i >= 0 {
				t.Errorf("%v: token T%d printed whole", args, k+1)
			}
		}
	}
}

// held: one call: the service redirects its first attempt (token T1) to
// ?access_token=zzzzzzzz<T1's first byte> and answers the redirected
// request (which carries no token, so no renewal can follow the URL's
// credential in the call's record) 400, echoing zzzzzzzz<T1> in a header
// and the body: plain, -i, -v and -i -v print no part of T1 past it (the
// call's own token is first in its record, scrubbed before the URL's).
func TestAttack104SentOverlapSingleCallHeld(t *testing.T) {
	s := attack103Start(t)
	for _, args := range [][]string{{}, {"-i"}, {"-v"}, {"-i", "-v"}} {
		var mu sync.Mutex
		var first string
		s.reset(nil)
		s.mu.Lock()
		s.whole = func(w http.ResponseWriter, r *http.Request, tok string, n int) {
			mu.Lock()
			if first == "" {
				first = tok
			}
			t1 := first
			mu.Unlock()
			if r.URL.RawQuery == "" {
				http.Redirect(w, r, "/users/me?access_token="+url.QueryEscape("zzzzzzzz"+t1[:1]), http.StatusFound)
				return
			}
			w.Header().Set("X-Echo", "zzzzzzzz"+t1)
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"error":"bad token zzzzzzzz` + t1 + `"}`))
		}
		s.mu.Unlock()
		code, out := s.call(t, args...)
		mu.Lock()
		t1 := first
		mu.Unlock()
		if len(t1) < 16 {
			t.Fatalf("%v: exit %d: no token seen: %.400s", args, code, out)
		}
		if i := attack103Find(out, t1[1:]); i >= 0 {
			t.Errorf("%v: exit %d: call --help: \"Credentials are kept out of all call prints\": T1 but its first byte printed: %q",
				args, code, strings.ReplaceAll(attack103Around(out, i, len(t1)-1), t1[1:], "<T1 but its first byte>"))
		}
	}
}
