package transport_test

import (
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/transport"
)

// attack91KeptFor returns how long, in a synctest bubble, an answer with
// header h is given from the cache of a Transport with ReadCacheTTL ttl,
// counted from when its first read returns: the time of the first read
// after it that sends a request (probing every 50 ms, for at most an
// hour). The base takes delay to answer.
func attack91KeptFor(t *testing.T, ttl, delay time.Duration, h http.Header) time.Duration {
	t.Helper()
	var n atomic.Int64
	base := attack91RT(func(r *http.Request) (*http.Response, error) {
		time.Sleep(delay)
		n.Add(1)
		return &http.Response{StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: h.Clone(), Body: http.NoBody, Request: r}, nil
	})
	var kept time.Duration
	synctest.Test(t, func(t *testing.T) {
		tr := attack91CacheTransport(base, ttl)
		url := "https://profile.xboxlive.com/users/me/profile"
		attack91Get(t, tr, url, "1111")
		start := time.Now()
		for {
			at := time.Since(start)
			attack91Get(t, tr, url, "1111")
			if n.Load() > 1 || at >= time.Hour {
				kept = at
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
	return kept
}

func attack91Header(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

// held: ReadCacheTTL's godoc, "also keeps each 200 answer for this long (at
// most MaxReadCacheTTL, 10 s, and at most as long as it is still fresh:
// its Cache-Control max-age, else its Expires less its Date, less its
// Age, that freshness counted from when its request was sent; with
// neither, MaxReadCacheTTL less its Age) ... An answer with ... an Age or
// Expires that cannot be read, is not kept", with ReadCacheTTL an hour:
// Age one less than max-age (1 s; 0.7 s when the answer took 0.3 s); Age
// equal to max-age; Age with leading zeros (read as its digits); with a
// plus sign, a minus, a hex prefix (not kept); Age of 2^63 and more, with
// and without a lifetime (not kept); Expires equal to Date (not kept),
// 3 s after it (3 s, also with a Date in the year 9999); a Date in 1900
// and Expires in 9999, a Date in 9999 alone, max-age of 2^63 and of 26
// digits (10 s, the cap, no overflow); max-age and Age of 2^63-1 and
// 2^63-2 (both read as 2^31: not kept, never longer than the 1 s the
// answer states).
func TestAttack91ExpiryEdges(t *testing.T) {
	for _, c := range []struct {
		name  string
		h     http.Header
		delay time.Duration
		want  time.Duration
	}{
		{"Age max-age-1", attack91Header("Cache-Control", "max-age=5", "Age", "4"), 0, time.Second},
		{"Age max-age-1 slow", attack91Header("Cache-Control", "max-age=5", "Age", "4"), 300 * time.Millisecond, 700 * time.Millisecond},
		{"Age = max-age", attack91Header("Cache-Control", "max-age=5", "Age", "5"), 0, 0},
		{"Age 007", attack91Header("Cache-Control", "max-age=10", "Age", "007"), 0, 3 * time.Second},
		{"Age 40 digits", attack91Header("Cache-Control", "max-age=10", "Age", "0000000000000000000000000000000000000007"), 0, 3 * time.Second},
		{"Age 007 no lifetime", attack91Header("Age", "007"), 0, 3 * time.Second},
		{"Age +3", attack91Header("Cache-Control", "max-age=10", "Age", "+3"), 0, 0},
		{"Age +3 no lifetime", attack91Header("Age", "+3"), 0, 0},
		{"Age -0", attack91Header("Age", "-0"), 0, 0},
		{"Age 0x3", attack91Header("Cache-Control", "max-age=10", "Age", "0x3"), 0, 0},
		{"Age 2^63 max-age 2^63", attack91Header("Cache-Control", "max-age=9223372036854775808", "Age", "9223372036854775808"), 0, 0},
		{"Age 2^63 no lifetime", attack91Header("Age", "9223372036854775808"), 0, 0},
		{"Age 2^63-1 no lifetime", attack91Header("Age", "9223372036854775807"), 0, 0},
		{"Age 2^64*10^4 no lifetime", attack91Header("Age", "184467440737095516160000"), 0, 0},
		{"Expires = Date", attack91Header("Date", "Mon, 07 Dec 2026 12:00:00 GMT", "Expires", "Mon, 07 Dec 2026 12:00:00 GMT"), 0, 0},
		{"Expires = Date+3s", attack91Header("Date", "Mon, 07 Dec 2026 12:00:00 GMT", "Expires", "Mon, 07 Dec 2026 12:00:03 GMT"), 0, 3 * time.Second},
		{"Date 9999 Expires +3s", attack91Header("Date", "Fri, 31 Dec 9999 23:59:50 GMT", "Expires", "Fri, 31 Dec 9999 23:59:53 GMT"), 0, 3 * time.Second},
		{"Expires = Date+3s Age 2", attack91Header("Date", "Mon, 07 Dec 2026 12:00:00 GMT", "Expires", "Mon, 07 Dec 2026 12:00:03 GMT", "Age", "2"), 0, time.Second},
		{"Date 1900 Expires 9999", attack91Header("Date", "Mon, 01 Jan 1900 00:00:00 GMT", "Expires", "Fri, 31 Dec 9999 23:59:59 GMT"), 0, transport.MaxReadCacheTTL},
		{"Date 9999 alone", attack91Header("Date", "Fri, 31 Dec 9999 23:59:59 GMT"), 0, transport.MaxReadCacheTTL},
		{"Date 1900 alone", attack91Header("Date", "Mon, 01 Jan 1900 00:00:00 GMT"), 0, transport.MaxReadCacheTTL},
		{"max-age 2^63", attack91Header("Cache-Control", "max-age=9223372036854775808"), 0, transport.MaxReadCacheTTL},
		{"max-age 26 digits", attack91Header("Cache-Control", "max-age=99999999999999999999999999"), 0, transport.MaxReadCacheTTL},
		{"max-age 2^63-1 Age 2^63-2", attack91Header("Cache-Control", "max-age=9223372036854775807", "Age", "9223372036854775806"), 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := attack91KeptFor(t, time.Hour, c.delay, c.h)
			if got > transport.MaxReadCacheTTL {
				t.Errorf("kept %v, past MaxReadCacheTTL", got)
			}
			if got != c.want {
				t.Errorf("kept %v; want %v (header %v)", got, c.want, c.h)
			}
		})
	}
}

// held: several Age values. RFC 9111 §5.1: "a cache encountering a message
// with a list-based Age field value SHOULD use the first member of the
// field value, discarding subsequent ones." Two Age lines, 1 then 8, with
// max-age=10: kept 9 s (the first); the list "1, 8" in one line: kept no
// longer than that (the cache keeps it not at all, an Age it cannot read);
// two lines 8 then 1: 2 s.
func TestAttack91ExpirySeveralAges(t *testing.T) {
	two := func(a, b string) http.Header {
		return http.Header{"Cache-Control": {"max-age=10"}, "Age": {a, b}}
	}
	if got := attack91KeptFor(t, time.Hour, 0, two("1", "8")); got != 9*time.Second {
		t.Errorf("Age 1 then 8: kept %v; want 9s", got)
	}
	if got := attack91KeptFor(t, time.Hour, 0, two("8", "1")); got != 2*time.Second {
		t.Errorf("Age 8 then 1: kept %v; want 2s", got)
	}
	if got := attack91KeptFor(t, time.Hour, 0, attack91Header("Cache-Control", "max-age=10", "Age", "1, 8")); got > 9*time.Second {
		t.Errorf("Age \"1, 8\": kept %v; more than 9s", got)
	}
}

// held: "at most MaxReadCacheTTL, 10 s": an Age of 2^63 seconds on an
// answer whose Expires is 9,998 years after its Date is read as 2^31 s
// (RFC 9111 §1.2.2's cap, 68 years), less than the lifetime, and kept:
// never past MaxReadCacheTTL. (Read literally, "Expires less its Date,
// less its Age" is negative: RFC 9111 §1.2.2 makes the cap a MUST.)
func TestAttack91ExpiryHugeAgeHugeLifetime(t *testing.T) {
	got := attack91KeptFor(t, time.Hour, 0, attack91Header("Date", "Mon, 01 Jan 0001 00:00:00 GMT", "Expires", "Fri, 31 Dec 9999 23:59:59 GMT", "Age", "9223372036854775808"))
	t.Logf("kept %v", got)
	if got > transport.MaxReadCacheTTL {
		t.Errorf("kept %v, past MaxReadCacheTTL", got)
	}
}
