package transport_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/internal/racebuild"
	"github.com/xblgo/fgrl/internal/scaletest"
	"github.com/xblgo/fgrl/transport"
)

// attack91Users is a base that counts the requests of each URL path and
// answers each with its path, fresh for max-age seconds when the path
// starts with "/short".
type attack91Users struct{ n map[string]*atomic.Int64 }

func (b *attack91Users) count(path string) int64 {
	if c := b.n[path]; c != nil {
		return c.Load()
	}
	return 0
}

func attack91UsersBase(paths ...string) (*attack91Users, http.RoundTripper) {
	b := &attack91Users{n: map[string]*atomic.Int64{}}
	for _, p := range paths {
		b.n[p] = new(atomic.Int64)
	}
	return b, attack91RT(func(r *http.Request) (*http.Response, error) {
		if c := b.n[r.URL.Path]; c != nil {
			c.Add(1)
		}
		h := http.Header{}
		if strings.HasPrefix(r.URL.Path, "/short") {
			h.Set("Cache-Control", "max-age=1")
		}
		return &http.Response{StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: h, Body: io.NopCloser(strings.NewReader(r.URL.Path)), Request: r}, nil
	})
}

func attack91Get(t *testing.T, tr http.RoundTripper, url, user string) string {
	t.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	req.Header.Set("Authorization", "XBL3.0 x="+user+";token-"+user)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func attack91CacheTransport(base http.RoundTripper, ttl time.Duration) *transport.Transport {
	return &transport.Transport{Base: base, TitleID: "1234567890", CoalesceReads: true, ReadCacheTTL: ttl, DisableBudget: true}
}

// held: one user's flood of distinct reads evicts another user's cached
// answer only once the cache is full, and that is what ReadCacheTTL's godoc
// promises: "The cache holds at most 4,096 answers and 64 MiB ... a new
// answer that finds it full takes the room of the oldest." The cache is
// one for every user of the Transport: nothing promises a user a share of
// it. While the flood leaves room (4,000 answers and the victim's), the
// victim's answer stays; the 96th answer past that takes its room.
func TestAttack91FloodEvictsAnotherUsersAnswerOnlyWhenFull(t *testing.T) {
	users, base := attack91UsersBase("/victim")
	synctest.Test(t, func(t *testing.T) {
		tr := attack91CacheTransport(base, transport.MaxReadCacheTTL)
		victim := "https://profile.xboxlive.com/victim"
		attack91Get(t, tr, victim, "2222")
		for i := range 4000 {
			attack91Get(t, tr, fmt.Sprintf("https://profile.xboxlive.com/flood/%d", i), "1111")
		}
		attack91Get(t, tr, victim, "2222")
		if n := users.count("/victim"); n != 1 {
			t.Errorf("the victim's answer was sent for again (%d requests) with 4,001 answers cached, within the 4,096 bound", n)
		}
		for i := range 96 {
			attack91Get(t, tr, fmt.Sprintf("https://profile.xboxlive.com/flood2/%d", i), "1111")
		}
		attack91Get(t, tr, victim, "2222")
		if n := users.count("/victim"); n != 2 {
			t.Errorf("%d requests for the victim's read after a flood that filled the cache; the godoc says the oldest answer gives its room (want 2)", n)
		}
	})
}

// TestAttack91FullOfExpiredAnswersEvictsAFreshOne: ReadCacheTTL's godoc,
// "also keeps each 200 answer for this long (at most MaxReadCacheTTL, 10
// s, and at most as long as it is still fresh ...) ... a new answer that
// finds it full takes the room of the oldest", and store's own comment
// (readcache.go): "store caches s under key, in place of the entries that
// have expired at now and, while the cache has no room for s, of its
// oldest entries".
//
// A victim's answer, fresh for 10 s, is cached first; another user then
// reads 4,095 distinct URLs whose answers are fresh for 1 s. Two seconds
// later those 4,095 have expired: the cache keeps one answer it may still
// give. The other user's next read finds 4,096 entries and, walking from
// the oldest, drops the victim's fresh answer before the 4,095 expired
// ones behind it, whose going would have made room.
func TestAttack91FullOfExpiredAnswersEvictsAFreshOne(t *testing.T) {
	users, base := attack91UsersBase("/victim")
	synctest.Test(t, func(t *testing.T) {
		tr := attack91CacheTransport(base, transport.MaxReadCacheTTL)
		victim := "https://profile.xboxlive.com/victim"
		attack91Get(t, tr, victim, "2222")
		for i := range 4095 {
			attack91Get(t, tr, fmt.Sprintf("https://profile.xboxlive.com/short/%d", i), "1111")
		}
		time.Sleep(2 * time.Second)
		attack91Get(t, tr, "https://profile.xboxlive.com/short/new", "1111")
		attack91Get(t, tr, victim, "2222")
		if n := users.count("/victim"); n != 1 {
			t.Errorf("the victim's answer, fresh for 8 s more, was dropped for a new answer while the 4,095 other entries had all expired (%d requests for it, want 1)", n)
		}
	})
}

// held: a flood of distinct reads does not make a read cost more. The time
// of a read that misses (and stores, evicting the oldest once the cache
// is full) after 1,000 against 50,000 distinct reads, and the time of a
// read that hits with the cache holding 1,000 answers against 4,096 after
// a 50,000-read flood: each per read within 3x (scaletest.Measure: the
// sizes alternately, the least of 3 rounds on the wall clock and CPU
// time, the smaller ratio).
func TestAttack91FloodKeepsReadCostFlat(t *testing.T) {
	racebuild.Skip(t, "volume test: 100,000 calls on one goroutine")
	_, base := attack91UsersBase()
	req := func(i int) *http.Request {
		r, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, fmt.Sprintf("https://profile.xboxlive.com/users/%d/profile", i), nil)
		r.Header.Set("Authorization", "XBL3.0 x=1111;token-a")
		return r
	}
	do := func(tr *transport.Transport, r *http.Request) {
		resp, err := tr.RoundTrip(r)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	misses := func(n int) func() {
		return func() {
			tr := attack91CacheTransport(base, transport.MaxReadCacheTTL)
			for i := range n {
				do(tr, req(i))
			}
		}
	}
	const small, large = 1000, 50000
	g := scaletest.Measure(3, misses(small), misses(large))
	perRead := g.Ratio() / (large / small)
	t.Logf("misses: %v; per read %.2fx", g, perRead)
	if perRead > 3 {
		t.Errorf("a read that misses costs %.1fx as much after %d distinct reads as after %d (%v)", perRead, large, small, g)
	}

	const hits = 20000
	hitsAfter := func(n int) func() {
		tr := attack91CacheTransport(base, transport.MaxReadCacheTTL)
		for i := range n {
			do(tr, req(i))
		}
		reqs := make([]*http.Request, 1000)
		for i := range reqs {
			reqs[i] = req(n - 1 - i) // the newest: still cached
		}
		return func() {
			for i := range hits {
				do(tr, reqs[i%len(reqs)])
			}
		}
	}
	h := scaletest.Measure(3, hitsAfter(small), hitsAfter(large))
	t.Logf("hits: %v", h)
	if h.Ratio() > 3 {
		t.Errorf("a read that hits costs %.1fx as much after a flood of %d distinct reads as after %d (%v)", h.Ratio(), large, small, h)
	}
}
