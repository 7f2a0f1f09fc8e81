package transport

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// attack47SlowBody gives its text after sleeping d (virtual time in a bubble).
type attack47SlowBody struct {
	d    time.Duration
	text string
	done bool
}

func (b *attack47SlowBody) Read(p []byte) (int, error) {
	if b.done {
		return 0, io.EOF
	}
	time.Sleep(b.d)
	b.done = true
	return copy(p, b.text), io.EOF
}

func (b *attack47SlowBody) Close() error { return nil }

// attack47CacheRun sends the read at 0 through a transport whose base answers
// every request with the headers hdr(now) gives, after wait, its body
// taking bodyTime; it then reads again at each of again (from the start)
// and returns, for each, whether that read was sent (true) or answered from
// memory.
func attack47CacheRun(t *testing.T, ttl time.Duration, hdr func(now time.Time) http.Header, wait, bodyTime time.Duration, again ...time.Duration) []bool {
	t.Helper()
	var sent atomic.Int32
	base := attack47RT(func(r *http.Request) (*http.Response, error) {
		sent.Add(1)
		if wait > 0 {
			time.Sleep(wait)
		}
		resp := attack47Resp(r, 200, hdr(time.Now()), "")
		resp.ContentLength = -1
		resp.Body = &attack47SlowBody{d: bodyTime, text: "answer"}
		return resp, nil
	})
	tr := &Transport{TitleID: title, CoalesceReads: true, ReadCacheTTL: ttl, DisableBudget: true, Base: base}
	start := time.Now()
	if r := attack47Do(tr, context.Background(), attack47URL, xuid1); r.err != nil || r.body != "answer" {
		t.Fatalf("first read: %q %v", r.body, r.err)
	}
	var out []bool
	for _, at := range again {
		time.Sleep(time.Until(start.Add(at)))
		n := sent.Load()
		if r := attack47Do(tr, context.Background(), attack47URL, xuid1); r.err != nil || r.body != "answer" {
			t.Fatalf("read at %v: %q %v", at, r.body, r.err)
		}
		out = append(out, sent.Load() > n)
	}
	return out
}

func attack47HTTPDate(t time.Time) string { return t.UTC().Format(http.TimeFormat) }

// TestAttack47CacheExpiresAgeClippedKeepsStale: ReadCacheTTL's godoc keeps an answer
// "at most as long as it is still fresh: its Cache-Control max-age, else its
// Expires less its Date, less its Age".
//
// An answer with Expires = Date + 3600 s and Age: 3595 is fresh for 5 s
// (RFC 9111 §4.2.3). The Age is cut to 11 s before it is taken off a
// lifetime that was not cut (3600 s), so the answer is kept for the whole
// 10 s TTL: a read at 7 s, 2 s after the answer went stale, is answered
// from memory.
func TestAttack47CacheExpiresAgeClippedKeepsStale(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hdr := func(now time.Time) http.Header {
			return http.Header{"Date": {attack47HTTPDate(now)}, "Expires": {attack47HTTPDate(now.Add(time.Hour))}, "Age": {"3595"}}
		}
		got := attack47CacheRun(t, MaxReadCacheTTL, hdr, 0, 0, 4*time.Second, 7*time.Second)
		if got[0] {
			t.Errorf("at 4 s (still fresh) the read was sent: want it from memory")
		}
		if !got[1] {
			t.Errorf("Expires = Date + 3600 s, Age: 3595 (fresh 5 s): a read at 7 s was answered from memory, 2 s past the answer's freshness")
		}
	})
}

// TestAttack47CacheMaxAgeCutBeforeAge: ReadCacheTTL's godoc: it "keeps each 200
// answer for this long (at most MaxReadCacheTTL, 10 s, and at most as long as
// it is still fresh: its Cache-Control max-age ... less its Age ...): the same
// read with the same credentials made again within it is answered from
// memory".
//
// max-age=3600 with Age: 20 is fresh for 3580 s (RFC 9111 §4.2.3), yet it
// is not kept at all: max-age is cut to 10 s before the Age is taken off
// (10 − 11 < 0). max-age=3600 with Age: 3 is kept 7 s, not the 10 s TTL.
func TestAttack47CacheMaxAgeCutBeforeAge(t *testing.T) {
	for _, tc := range []struct {
		age string
		at  time.Duration
	}{{"20", time.Second}, {"3", 8 * time.Second}} {
		t.Run("age-"+tc.age, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				hdr := func(time.Time) http.Header {
					return http.Header{"Cache-Control": {"max-age=3600"}, "Age": {tc.age}}
				}
				if got := attack47CacheRun(t, MaxReadCacheTTL, hdr, 0, 0, tc.at); got[0] {
					t.Errorf("max-age=3600, Age: %s (fresh %d s), ReadCacheTTL 10 s: the same read at %v was sent again, not answered from memory",
						tc.age, 3600-attack47Atoi(tc.age), tc.at)
				}
			})
		})
	}
}

func attack47Atoi(s string) int {
	n := 0
	for _, c := range s {
		n = 10*n + int(c-'0')
	}
	return n
}

// TestAttack47CacheHugeMaxAgeNotKept: ReadCacheTTL's godoc: it "keeps each 200
// answer for this long (... at most as long as it is still fresh: its
// Cache-Control max-age ...)"; only "an Age or Expires that cannot be read" is
// named as not kept. RFC 9111 §1.2.2, which the code cites: a delta-seconds
// "greater than the greatest integer it can represent ... MUST consider the
// value to be 2147483648 (2^31) or the greatest positive integer it can
// conveniently represent".
//
// max-age=99999999999999999999 (past int64) is not kept at all.
func TestAttack47CacheHugeMaxAgeNotKept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hdr := func(time.Time) http.Header {
			return http.Header{"Cache-Control": {"max-age=99999999999999999999"}}
		}
		if got := attack47CacheRun(t, MaxReadCacheTTL, hdr, 0, 0, time.Second); got[0] {
			t.Errorf("max-age=99999999999999999999: the same read 1 s later was sent again; want it from memory (RFC 9111 §1.2.2: take it as 2^31)")
		}
	})
}

// TestAttack47CacheRepeatedMaxAgeLastWins: ReadCacheTTL's godoc keeps an answer "at
// most as long as it is still fresh: its Cache-Control max-age"; RFC 9111
// §4.2.1 (cited by the code): "When there is more than one value present for
// a given directive (e.g., two Expires header field lines or multiple
// Cache-Control: max-age directives), either the first occurrence should be
// used or the response should be considered stale."
//
// "max-age=1" then "max-age=10" (one line, or two lines) is kept for 10 s:
// the last one wins, and a read at 3 s is answered from memory. (For two
// Expires or two Age lines the code takes the first.)
func TestAttack47CacheRepeatedMaxAgeLastWins(t *testing.T) {
	for name, cc := range map[string][]string{
		"one-line":  {"max-age=1, max-age=10"},
		"two-lines": {"max-age=1", "max-age=10"},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				hdr := func(time.Time) http.Header { return http.Header{"Cache-Control": cc} }
				if got := attack47CacheRun(t, MaxReadCacheTTL, hdr, 0, 0, 3*time.Second); !got[0] {
					t.Errorf("Cache-Control %q: a read at 3 s was answered from memory (kept by the last max-age, 10 s); the first says 1 s", cc)
				}
			})
		})
	}
}

// TestAttack47CacheFreshnessCountedFromCallNotSend: ReadCacheTTL's godoc: the
// freshness an answer states counts "from when its request was sent"; the
// cache keeps "each 200 answer for this long (at most ... as long as it is
// still fresh ...)" and "the same read ... made again within it is answered
// from memory".
//
// The freshness is counted from when the flight started, before the call's
// budget wait or its retries: a read that waited 16 s for its budget and was
// answered at once with max-age=10 is not kept at all (fresh until 26 s),
// and one whose first attempt got a 503 and whose retry, sent at 2-4 s, got
// max-age=5 at once, is not kept the 5 s it states from its sending.
func TestAttack47CacheFreshnessCountedFromCallNotSend(t *testing.T) {
	t.Run("budget-wait", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var sent atomic.Int32
			var sentAt time.Time
			base := attack47RT(func(r *http.Request) (*http.Response, error) {
				if strings.HasPrefix(r.URL.Path, "/fill") {
					return attack47Resp(r, 200, nil, "fill"), nil
				}
				if sent.Add(1) == 1 {
					sentAt = time.Now()
				}
				return attack47Resp(r, 200, http.Header{"Cache-Control": {"max-age=10"}}, "answer"), nil
			})
			tr := &Transport{TitleID: title, CoalesceReads: true, ReadCacheTTL: MaxReadCacheTTL, Limits: attack47ProfileLimits(t, 2), Base: base}
			start := time.Now()
			for _, p := range []string{"/fill1", "/fill2"} {
				attack47Do(tr, context.Background(), "https://profile.xboxlive.com"+p, xuid1)
			}
			if r := attack47Do(tr, context.Background(), attack47URL, xuid1); r.status != 200 {
				t.Fatalf("first read: %d %v", r.status, r.err)
			}
			time.Sleep(time.Second)
			attack47Do(tr, context.Background(), attack47URL, xuid1)
			if n := sent.Load(); n != 1 {
				t.Errorf("max-age=10 answered at once to a request sent at %v (after its budget wait): the same read 1 s later was sent again (%d requests); want it from memory",
					sentAt.Sub(start), n)
			}
		})
	})
	t.Run("retry", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var sent atomic.Int32
			var sentAt time.Time
			base := attack47RT(func(r *http.Request) (*http.Response, error) {
				switch sent.Add(1) {
				case 1:
					return attack47Resp(r, 503, nil, ""), nil
				case 2:
					sentAt = time.Now()
				}
				return attack47Resp(r, 200, http.Header{"Cache-Control": {"max-age=5"}}, "answer"), nil
			})
			tr := &Transport{TitleID: title, CoalesceReads: true, ReadCacheTTL: MaxReadCacheTTL, DisableBudget: true, Base: base}
			start := time.Now()
			if r := attack47Do(tr, context.Background(), attack47URL, xuid1); r.status != 200 {
				t.Fatalf("first read: %d %v", r.status, r.err)
			}
			at := time.Since(start)
			time.Sleep(3500*time.Millisecond - time.Since(sentAt))
			attack47Do(tr, context.Background(), attack47URL, xuid1)
			if n := sent.Load(); n != 2 {
				t.Errorf("max-age=5 answered at once to a retry sent at %v (the call ended at %v): the same read 3.5 s after the retry was sent went out again (%d requests); want it from memory", sentAt.Sub(start), at, n)
			}
		})
	})
}

// held: ReadCacheTTL's godoc: the freshness an answer states counts "from
// when its request was sent (...); ReadCacheTTL itself runs from when the
// answer is kept"; Expires less Date is a lifetime whatever the Date (past,
// future); max-age wins over Expires; max-age=0, no-cache and no-store are
// not kept; header names in any case (a base building its map by hand).
func TestAttack47CacheHeldFreshness(t *testing.T) {
	type check struct {
		at   time.Duration
		sent bool
	}
	for _, tc := range []struct {
		name     string
		ttl      time.Duration
		hdr      func(now time.Time) http.Header
		wait     time.Duration
		bodyTime time.Duration
		checks   []check
	}{
		{"max-age-slow-body", 10 * time.Second, func(time.Time) http.Header { return http.Header{"Cache-Control": {"max-age=5"}} },
			0, 3 * time.Second, []check{{4500 * time.Millisecond, false}, {5500 * time.Millisecond, true}}},
		{"max-age-slow-headers", 10 * time.Second, func(time.Time) http.Header { return http.Header{"Cache-Control": {"max-age=5"}} },
			3 * time.Second, 0, []check{{4500 * time.Millisecond, false}, {5500 * time.Millisecond, true}}},
		{"ttl-from-kept", 2 * time.Second, func(time.Time) http.Header { return http.Header{} },
			0, 3 * time.Second, []check{{4900 * time.Millisecond, false}, {5100 * time.Millisecond, true}}},
		{"expires-date-past", 10 * time.Second, func(now time.Time) http.Header {
			d := now.Add(-100 * time.Second)
			return http.Header{"Date": {attack47HTTPDate(d)}, "Expires": {attack47HTTPDate(d.Add(5 * time.Second))}}
		}, 0, 0, []check{{4 * time.Second, false}, {6 * time.Second, true}}},
		{"expires-date-future", 10 * time.Second, func(now time.Time) http.Header {
			d := now.Add(time.Hour)
			return http.Header{"Date": {attack47HTTPDate(d)}, "Expires": {attack47HTTPDate(d.Add(5 * time.Second))}}
		}, 0, 0, []check{{4 * time.Second, false}, {6 * time.Second, true}}},
		{"expires-slow-body", 10 * time.Second, func(now time.Time) http.Header {
			return http.Header{"Date": {attack47HTTPDate(now)}, "Expires": {attack47HTTPDate(now.Add(4 * time.Second))}}
		}, 0, 3 * time.Second, []check{{3500 * time.Millisecond, false}, {4500 * time.Millisecond, true}}},
		{"max-age-over-expires", 10 * time.Second, func(now time.Time) http.Header {
			return http.Header{"Cache-Control": {"max-age=3"}, "Date": {attack47HTTPDate(now)}, "Expires": {attack47HTTPDate(now.Add(100 * time.Second))}}
		}, 0, 0, []check{{2 * time.Second, false}, {4 * time.Second, true}}},
		{"max-age-age", 10 * time.Second, func(time.Time) http.Header { return http.Header{"Cache-Control": {"max-age=8"}, "Age": {"5"}} },
			0, 0, []check{{2 * time.Second, false}, {4 * time.Second, true}}},
		{"max-age-0", 10 * time.Second, func(time.Time) http.Header { return http.Header{"Cache-Control": {"max-age=0"}} },
			0, 0, []check{{100 * time.Millisecond, true}}},
		{"lower-case-names", 10 * time.Second, func(time.Time) http.Header { return http.Header{"cache-control": {"max-age=2"}} },
			0, 0, []check{{time.Second, false}, {3 * time.Second, true}}},
		{"lower-no-store", 10 * time.Second, func(time.Time) http.Header {
			return http.Header{"Cache-Control": {"max-age=9"}, "cache-control": {"No-Store"}}
		}, 0, 0, []check{{100 * time.Millisecond, true}}},
		{"no-cache-second-line", 10 * time.Second, func(time.Time) http.Header {
			return http.Header{"Cache-Control": {"max-age=9", "private, no-cache"}}
		}, 0, 0, []check{{100 * time.Millisecond, true}}},
		{"lower-age", 10 * time.Second, func(time.Time) http.Header {
			return http.Header{"Cache-Control": {"max-age=8"}, "age": {"6"}}
		}, 0, 0, []check{{time.Second, false}, {3 * time.Second, true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var ats []time.Duration
				for _, c := range tc.checks {
					ats = append(ats, c.at)
				}
				got := attack47CacheRun(t, tc.ttl, tc.hdr, tc.wait, tc.bodyTime, ats...)
				for i, c := range tc.checks {
					if got[i] != c.sent {
						t.Errorf("read at %v: sent %v, want %v", c.at, got[i], c.sent)
					}
				}
			})
		})
	}
}
