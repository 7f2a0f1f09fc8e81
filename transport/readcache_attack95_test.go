package transport

// Outside attack (helper attack95) on the read cache's heap of ends, its one
// removal path (drop), its eviction order and the ownership of what it
// keeps (7c5ae65). The promises under attack, ReadCacheTTL's godoc:
//
//	"The cache holds at most 4,096 answers and 64 MiB, counting the memory
//	of bodies, headers, status lines and keys (a replaced answer's key too,
//	until it leaves); a new answer takes the room of the answers that have
//	expired and, if it still finds the cache full, of the oldest."
//
// store's comment: "those that have expired are found on the heap of ends,
// the first to end on top: each leaves it once, at O(log n) for n entries"
// and coalescer.bytes' comment: "bytes is what the cache holds: its
// entries' sizes, and the keys of entries replaced or dropped whose
// references order still holds". RELIABILITY.md: "a new answer takes the
// room of every answer that has expired, found on a heap of the entries by
// their end (O(log n) a store, 12 levels at 4,096, never a scan), and only
// then of the oldest".

import (
	"context"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/internal/racebuild"
	"github.com/xblgo/fgrl/internal/scaletest"
)

type attack95RT func(*http.Request) (*http.Response, error)

func (f attack95RT) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// attack95Check compares every structure of the cache with the others: the
// heap of ends holds exactly the map's entries, each at the index it
// records, in heap order; every entry is under its own key; order holds one
// reference to each entry, at the index it records, and nil in the places
// of entries dropped (none before head); bytes is what the entries hold
// and stale the number of nils; the bounds hold.
func attack95Check(t testing.TB, tr *Transport) {
	t.Helper()
	c := &tr.reads
	c.mu.Lock()
	defer c.mu.Unlock()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Errorf(format, args...)
	}
	if len(c.ends) != len(c.cache) {
		fail("heap of ends holds %d entries, the map %d", len(c.ends), len(c.cache))
	}
	for i, s := range c.ends {
		if s == nil {
			fail("heap of ends: nil at %d", i)
			continue
		}
		if s.end != i {
			fail("heap of ends: entry at %d records index %d", i, s.end)
		}
		if c.cache[s.key] != s {
			fail("heap of ends: entry at %d (%q) is not the map's entry under its key", i, s.key.uri)
		}
		if i > 0 && s.until.Before(c.ends[(i-1)/2].until) {
			fail("heap of ends: entry at %d ends before its parent", i)
		}
	}
	for k, s := range c.cache {
		if s.key != k {
			fail("entry under %q records key %q", k.uri, s.key.uri)
		}
		if s.end < 0 || s.end >= len(c.ends) || c.ends[s.end] != s {
			fail("entry %q records heap index %d, where it is not", k.uri, s.end)
		}
	}
	want, stale := 0, 0
	for _, s := range c.cache {
		want += s.size
	}
	live := map[*shared]bool{}
	for i, s := range c.order {
		switch {
		case s == nil:
			stale++
		case i < c.head || s.ref != i || c.cache[s.key] != s || live[s]:
			fail("order: the reference at %d (head %d) to %q, which records %d, is not the one to an entry of the map", i, c.head, s.key.uri, s.ref)
		default:
			live[s] = true
		}
	}
	if len(live) != len(c.cache) {
		fail("%d entries, %d of them with a reference in order", len(c.cache), len(live))
	}
	if c.bytes != want || c.stale != stale {
		fail("the cache counts %d bytes and %d stale references; it holds %d bytes and %d stale references", c.bytes, c.stale, want, stale)
	}
	if c.bytes < 0 || c.bytes > maxCachedBytes || len(c.cache) > maxCachedEntries {
		fail("the cache counts %d bytes, %d entries: out of its bounds", c.bytes, len(c.cache))
	}
	// The count by URL that invalidate reads: every entry and flight once.
	targets := map[uint64]int{}
	for k := range c.cache {
		targets[c.hash(k.target())]++
	}
	for k := range c.flights {
		targets[c.hash(k.target())]++
	}
	for _, u := range c.replaced {
		targets[c.hash(u)]++
	}
	if !maps.Equal(targets, c.targets) && len(targets)+len(c.targets) > 0 {
		fail("the count by URL is %v; the entries and flights are %v", c.targets, targets)
	}
}

func attack95Key(i int) readKey {
	return readKey{title: "1234567890", scheme: "https", urlHost: "profile.xboxlive.com", host: "profile.xboxlive.com", uri: "/k/" + strconv.Itoa(i)}
}

var attack95Head = &http.Response{StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
	Header: http.Header{"Content-Type": {"application/json"}, "X-A": {"1", "2"}}}

// attack95Entry is what lead stores: the cache's own copy of an answer.
func attack95Entry(key readKey, body []byte, until time.Time) *shared {
	return (&shared{resp: attack95Head, body: body}).kept(key, until)
}

// attack95Read reads url as user 1111 with policy pol (zero: none) and
// returns the answer's X-N and body.
func attack95Read(tr http.RoundTripper, url string, pol Policy) (string, string, error) {
	ctx := context.Background()
	if pol != (Policy{}) {
		ctx = WithPolicy(ctx, pol)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", "", err
	}
	req.Header.Set("Authorization", "XBL3.0 x=1111;token-a")
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return "", "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.Header.Get("X-N"), string(b), err
}

// held: (1) under -race, 16 goroutines store and read 48 keys directly
// (store and cached, the paths lead and cachedOrLead take) on the real
// clock, each answer living 1 to 5 ms, the same keys replaced with other
// lifetimes while they live and while they expire, each goroutine's now
// taken before it gets the lock (so stores come with nows out of order),
// while a 17th checks every structure: no panic, the heap's indexes, the
// map, order and the byte count always agree.
func TestAttack95RaceDirectStoresRealClock(t *testing.T) {
	tr := &Transport{}
	var stop atomic.Bool
	var wg sync.WaitGroup
	checks := 0
	wg.Go(func() {
		for !stop.Load() {
			attack95Check(t, tr)
			checks++
			time.Sleep(200 * time.Microsecond)
		}
	})
	var ops sync.WaitGroup
	for g := range 16 {
		ops.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 221))
			body := make([]byte, 100)
			for range 4000 {
				k := attack95Key(r.IntN(48))
				now := time.Now()
				if r.IntN(3) == 0 {
					tr.cached(k, now)
					continue
				}
				ttl := time.Millisecond + time.Duration(r.IntN(4000))*time.Microsecond
				tr.store(k, attack95Entry(k, body, now.Add(ttl)), now)
			}
		})
	}
	ops.Wait()
	stop.Store(true)
	wg.Wait()
	attack95Check(t, tr)
	t.Logf("%d checks", checks)
}

// held: (1) the same through RoundTrip on the real clock, ReadCacheTTL 1
// to 5 ms: 32 goroutines of 4 policies each (so several leaders of one
// key store at once: the flight key holds the policy, the cache key does
// not), over 24 URLs, the base taking 0 to 2 ms; a checker runs
// throughout. Every caller gets one whole answer of its URL.
func TestAttack95RaceRoundTripRealClock(t *testing.T) {
	for ms := 1; ms <= 5; ms++ {
		t.Run(fmt.Sprintf("ttl%dms", ms), func(t *testing.T) {
			var seq atomic.Int64
			base := attack95RT(func(r *http.Request) (*http.Response, error) {
				n := seq.Add(1)
				time.Sleep(time.Duration(n%3) * time.Millisecond)
				body := fmt.Sprintf("%s n=%d %s", r.URL.Path, n, strings.Repeat("b", int(n%7)*50))
				return &http.Response{StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
					Header: http.Header{"X-N": {strconv.FormatInt(n, 10)}}, Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
			})
			tr := &Transport{Base: base, TitleID: "1234567890", CoalesceReads: true, ReadCacheTTL: time.Duration(ms) * time.Millisecond, DisableBudget: true}
			var stop atomic.Bool
			var chk sync.WaitGroup
			chk.Go(func() {
				for !stop.Load() {
					attack95Check(t, tr)
					time.Sleep(300 * time.Microsecond)
				}
			})
			var wg sync.WaitGroup
			for g := range 32 {
				wg.Go(func() {
					pol := Policy{AttemptTimeout: time.Duration(g%4+1) * time.Second}
					for i := range 150 {
						path := fmt.Sprintf("/k/%d", (g*7+i)%24)
						n, body, err := attack95Read(tr, "https://profile.xboxlive.com"+path, pol)
						if err != nil {
							t.Error(err)
							return
						}
						if !strings.HasPrefix(body, path+" n="+n+" ") {
							t.Errorf("read of %s: X-N %s with body %.40q", path, n, body)
						}
					}
				})
			}
			wg.Wait()
			stop.Store(true)
			chk.Wait()
			attack95Check(t, tr)
		})
	}
}

// held: (1) in a synctest bubble: ReadCacheTTL 1 to 5 ms, the base taking
// 0 to 4 ms of virtual time, and answers of max-age 1 to 9 s with an Age
// of 0 to 3 s under a 10 s ReadCacheTTL (entries replaced with another
// lifetime, ending in every order); 48 goroutines of 4 policies over 32
// URLs, the structures checked after every round and by a checker
// goroutine between.
func TestAttack95RaceRoundTripSynctest(t *testing.T) {
	for _, ttl := range []time.Duration{time.Millisecond, 2 * time.Millisecond, 3 * time.Millisecond, 5 * time.Millisecond, MaxReadCacheTTL} {
		t.Run(ttl.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var seq atomic.Int64
				base := attack95RT(func(r *http.Request) (*http.Response, error) {
					n := seq.Add(1)
					h := http.Header{"X-N": {strconv.FormatInt(n, 10)}}
					if ttl >= time.Second {
						h.Set("Cache-Control", "max-age="+strconv.FormatInt(n%9+1, 10))
						h.Set("Age", strconv.FormatInt(n%4, 10))
						time.Sleep(time.Duration(n%5) * 300 * time.Millisecond)
					} else {
						time.Sleep(time.Duration(n%5) * time.Millisecond)
					}
					body := fmt.Sprintf("%s n=%d %s", r.URL.Path, n, strings.Repeat("b", int(n%5)*40))
					return &http.Response{StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
						Header: h, Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
				})
				tr := &Transport{Base: base, TitleID: "1234567890", CoalesceReads: true, ReadCacheTTL: ttl, DisableBudget: true}
				for round := range 20 {
					var wg sync.WaitGroup
					for g := range 48 {
						wg.Go(func() {
							pol := Policy{AttemptTimeout: time.Duration(g%4+1) * time.Second}
							for i := range 10 {
								path := fmt.Sprintf("/k/%d", (g*5+i+round)%32)
								n, body, err := attack95Read(tr, "https://profile.xboxlive.com"+path, pol)
								if err != nil {
									t.Error(err)
									return
								}
								if !strings.HasPrefix(body, path+" n="+n+" ") {
									t.Errorf("read of %s: X-N %s with body %.40q", path, n, body)
								}
								if i%3 == 0 {
									attack95Check(t, tr)
								}
								time.Sleep(time.Duration(g%3) * ttl / 2)
							}
						})
					}
					wg.Wait()
					attack95Check(t, tr)
				}
			})
		})
	}
}

// attack95Model is the cache as its godoc describes it, counting entries
// only: a store takes the room of every answer that has expired, then, if
// the cache is still full, of the oldest stored.
type attack95Model struct {
	m   map[int]attack95ModelEntry
	seq int
}

type attack95ModelEntry struct {
	until time.Time
	seq   int
}

func (m *attack95Model) store(k int, until, now time.Time) {
	delete(m.m, k)
	for key, e := range m.m {
		if !now.Before(e.until) {
			delete(m.m, key)
		}
	}
	for len(m.m) >= maxCachedEntries {
		oldest, seq := -1, 0
		for key, e := range m.m {
			if oldest < 0 || e.seq < seq {
				oldest, seq = key, e.seq
			}
		}
		delete(m.m, oldest)
	}
	m.seq++
	m.m[k] = attack95ModelEntry{until, m.seq}
}

func (m *attack95Model) cached(k int, now time.Time) bool {
	e, ok := m.m[k]
	if ok && !now.Before(e.until) {
		delete(m.m, k)
		return false
	}
	return ok
}

// held: (2)(3) lifetimes in any order. Stores of 6,000 keys, the clock a
// millisecond further each store, with lifetimes descending (in blocks of
// 4,000 that all end at one instant: ties across keys), ascending, equal
// and random (1 ms to 8 s), so that 4,096 entries live and the cache is
// full, with reads between: after each operation the cache holds as many
// entries as a model of its godoc (expired first, then the oldest), and
// every 64 operations exactly the model's entries. The model keeps no key
// stored twice at one instant of end (see
// TestAttack95ReplacedAtTheSameEndDroppedAsTheOldest).
func TestAttack95LifetimeOrdersMatchModel(t *testing.T) {
	racebuild.Skip(t, "a model check of 120,000 operations on one goroutine")
	T0 := time.Date(2026, 12, 7, 16, 0, 0, 0, time.UTC)
	patterns := map[string]func(i int, r *rand.Rand) time.Duration{
		"descending": func(i int, _ *rand.Rand) time.Duration { return time.Duration(4000-i%4000) * time.Millisecond },
		"ascending":  func(i int, _ *rand.Rand) time.Duration { return time.Duration(1+i%8000) * time.Millisecond },
		"equal":      func(int, *rand.Rand) time.Duration { return 5 * time.Second },
		"random":     func(_ int, r *rand.Rand) time.Duration { return time.Duration(1+r.IntN(8000)) * time.Millisecond },
	}
	for name, life := range patterns {
		t.Run(name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(221, 7))
			tr := &Transport{}
			m := &attack95Model{m: map[int]attack95ModelEntry{}}
			used := map[int]map[time.Time]bool{}
			keys := make([]readKey, 6000)
			for i := range keys {
				keys[i] = attack95Key(i)
			}
			for i := range 30000 {
				now := T0.Add(time.Duration(i) * time.Millisecond)
				k := r.IntN(len(keys))
				if i%5 == 4 {
					got, want := tr.cached(keys[k], now) != nil, m.cached(k, now)
					if got != want {
						t.Fatalf("op %d: read of key %d: hit %v, the model's %v", i, k, got, want)
					}
					continue
				}
				until := now.Add(life(i, r))
				if used[k] == nil {
					used[k] = map[time.Time]bool{}
				}
				for used[k][until] {
					until = until.Add(time.Nanosecond)
				}
				used[k][until] = true
				tr.store(keys[k], &shared{resp: attack95Head, until: until, size: 512 + keys[k].size()}, now)
				m.store(k, until, now)
				tr.reads.mu.Lock()
				n := len(tr.reads.cache)
				tr.reads.mu.Unlock()
				if n != len(m.m) {
					t.Fatalf("op %d: the cache holds %d entries, the model %d", i, n, len(m.m))
				}
				if i%64 == 0 {
					attack95Check(t, tr)
					tr.reads.mu.Lock()
					for mk, e := range m.m {
						if s := tr.reads.cache[keys[mk]]; s == nil || !s.until.Equal(e.until) {
							t.Errorf("op %d: key %d, which the model keeps (ends %v), is not in the cache", i, mk, e.until.Sub(T0))
						}
					}
					tr.reads.mu.Unlock()
					if t.Failed() {
						t.FailNow()
					}
				}
			}
			attack95Check(t, tr)
		})
	}
}

// attack95Steady drives tr with stores whose random lifetimes keep about
// live entries alive (the clock one step a store), from store *i on; it
// returns a func making n more.
func attack95Steady(tr *Transport, live int, i *int, keys []readKey) func(n int) {
	T0 := time.Date(2026, 12, 7, 16, 0, 0, 0, time.UTC)
	r := rand.New(rand.NewPCG(uint64(live), 221))
	return func(n int) {
		for range n {
			now := T0.Add(time.Duration(*i) * time.Microsecond)
			until := now.Add(time.Duration(live/2+r.IntN(live))*time.Microsecond + time.Duration(*i%997))
			k := keys[*i%len(keys)]
			tr.store(k, &shared{resp: attack95Head, until: until, size: 512 + k.size()}, now)
			*i++
		}
	}
}

// held: (2) a store costs O(log n). 20,000 stores (random lifetimes, each
// store sweeping what has expired) into a cache holding about 1,000 live
// entries take within 2.5x of the time of 20,000 into one holding 4,096
// (a linear sweep would take 4x); and 20,000 stores into a full cache
// after 1,000,000 stores within 2.5x of 20,000 into a fresh full one.
func TestAttack95StoreCostLogarithmic(t *testing.T) {
	racebuild.Skip(t, "a test of times")
	keys := make([]readKey, 16384)
	for i := range keys {
		keys[i] = attack95Key(i)
	}
	var i1, i4 int
	tr1, tr4 := &Transport{}, &Transport{}
	s1, s4 := attack95Steady(tr1, 1000, &i1, keys), attack95Steady(tr4, 8000, &i4, keys)
	s1(20000)
	s4(40000)
	tr1.reads.mu.Lock()
	n1 := len(tr1.reads.cache)
	tr1.reads.mu.Unlock()
	tr4.reads.mu.Lock()
	n4 := len(tr4.reads.cache)
	tr4.reads.mu.Unlock()
	g := scaletest.Measure(5, func() { s1(20000) }, func() { s4(20000) })
	t.Logf("%d live vs %d live: %v", n1, n4, g)
	if g.Ratio() > 2.5 {
		t.Errorf("20,000 stores at %d live entries vs %d: %v", n1, n4, g)
	}
	attack95Check(t, tr1)
	attack95Check(t, tr4)

	var ia, ib int
	tra, trb := &Transport{}, &Transport{}
	sa, sb := attack95Steady(tra, 8000, &ia, keys), attack95Steady(trb, 8000, &ib, keys)
	sa(20000)
	sb(1_000_000)
	h := scaletest.Measure(5, func() { sa(20000) }, func() { sb(20000) })
	t.Logf("fresh full vs after 1M stores: %v", h)
	if h.Ratio() > 2.5 {
		t.Errorf("20,000 stores after 1,000,000 vs into a fresh full cache: %v", h)
	}
	attack95Check(t, trb)
}

// held: (2) no growth of memory with the number of stores. 1,000,000
// stores of answers of 15,000 bytes (each its own body and the cache's
// own head: kept) through a full cache (4,096 entries and close to
// 64 MiB), random lifetimes from 1 to 8,000 steps, keys replaced while
// they live: the heap after them is within 2 MiB of the heap after the
// first 20,000, and within 64 MiB and 8 MiB of fixed costs.
func TestAttack95MemoryAfterAMillionStores(t *testing.T) {
	racebuild.Skip(t, "heap figures of a 64 MiB cache")
	T0 := time.Date(2026, 12, 7, 16, 0, 0, 0, time.UTC)
	keys := make([]readKey, 20000)
	for i := range keys {
		keys[i] = attack95Key(i)
	}
	base := attack95HeapNow()
	tr := &Transport{}
	r := rand.New(rand.NewPCG(221, 1))
	i := 0
	run := func(n int) {
		for range n {
			now := T0.Add(time.Duration(i) * time.Microsecond)
			until := now.Add(time.Duration(1+r.IntN(8000)) * time.Microsecond)
			k := keys[r.IntN(len(keys))]
			tr.store(k, attack95Entry(k, make([]byte, 15000), until), now)
			i++
		}
	}
	run(20000)
	early := attack95HeapNow() - base
	run(980000)
	late := attack95HeapNow() - base
	tr.reads.mu.Lock()
	t.Logf("after 20,000 stores %.1f MiB; after 1,000,000 %.1f MiB; %d entries, %d counted bytes, order %d (cap %d), heap cap %d",
		float64(early)/(1<<20), float64(late)/(1<<20), len(tr.reads.cache), tr.reads.bytes, len(tr.reads.order), cap(tr.reads.order), cap(tr.reads.ends))
	tr.reads.mu.Unlock()
	if late-early > 2<<20 {
		t.Errorf("the heap grew by %.1f MiB from 20,000 stores to 1,000,000", float64(late-early)/(1<<20))
	}
	if late > 64<<20+8<<20 {
		t.Errorf("the heap holds %.1f MiB after 1,000,000 stores: past 64 MiB and 8 MiB of fixed costs", float64(late)/(1<<20))
	}
	attack95Check(t, tr)
	runtime.KeepAlive(tr)
}

func attack95HeapNow() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
