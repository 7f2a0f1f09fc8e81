package transport_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/xblgo/fgrl/internal/racebuild"
	"github.com/xblgo/fgrl/transport"
)

// The promise every test of this file checks, ReadCacheTTL's godoc: "The
// cache holds at most 4,096 answers and 64 MiB, counting the memory of
// bodies, headers, status lines and keys (a replaced answer's key too,
// until it leaves)". RELIABILITY.md (12:55 UTC) leaves uncounted "the
// fixed costs of an entry (its structs, the map's slot: up to about 2 MiB
// at 4,096 entries)": the bound used is 64 MiB and 8 MiB of room, as the
// attack-88 tests use.
const attack91Bound = 64<<20 + 8<<20

type attack91RT func(*http.Request) (*http.Response, error)

func (f attack91RT) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func attack91Heap() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// attack91Raw is a loopback HTTP/1.1 server that answers every request on a
// connection with the bytes respond gives (the client's net/http parses
// them and builds the header maps). It stops with the test.
func attack91Raw(t *testing.T, respond func(r *http.Request) string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	conns := map[net.Conn]bool{}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns[c] = true
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					io.Copy(io.Discard, req.Body)
					if _, err := io.WriteString(c, respond(req)); err != nil {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return "http://" + ln.Addr().String()
}

// attack91Fill makes reads distinct reads of one user through a fresh
// Transport over base (url(i) the i-th), reading each answer in full, and
// returns what the heap holds after them (held) and what it gave back
// once the Transport was dropped (freed).
func attack91Fill(t *testing.T, base http.RoundTripper, reads int, url func(i int) string) (held, freed int64) {
	t.Helper()
	closeIdle := func() {
		if h, ok := base.(*http.Transport); ok {
			h.CloseIdleConnections()
		}
	}
	before := attack91Heap()
	tr := &transport.Transport{Base: base, TitleID: "1234567890", CoalesceReads: true, ReadCacheTTL: transport.MaxReadCacheTTL, DisableBudget: true}
	for i := range reads {
		req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url(i), nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "XBL3.0 x=1111;token-a")
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
	closeIdle()
	held = attack91Heap() - before
	runtime.KeepAlive(tr)
	tr = nil
	freed = held - (attack91Heap() - before)
	return held, freed
}

// TestAttack91CacheStatusLineWithLeadingSpaces: the promise above, "counting
// the memory of ... status lines".
//
// A loopback server answers each read with an empty 200 whose status line
// is "HTTP/1.1", 64 KiB of spaces, then "200 OK" (within net/http's 10 MB
// header limit; net/http takes it). net/http's ReadResponse cuts Proto and
// Status (strings.TrimLeft of the spaces) out of the line it read, so the
// cached head's 14 bytes of Proto and Status keep the whole 64 KiB line,
// while the cache counts len(Status)+len(Proto).
func TestAttack91CacheStatusLineWithLeadingSpaces(t *testing.T) {
	racebuild.Skip(t, "heap figures of a 64 MiB cache")
	status := "HTTP/1.1" + strings.Repeat(" ", 64<<10) + "200 OK\r\nContent-Length: 0\r\n\r\n"
	srv := attack91Raw(t, func(*http.Request) string { return status })
	const reads = 1500
	held, freed := attack91Fill(t, &http.Transport{}, reads, func(i int) string { return fmt.Sprintf("%s/users/me/profile?n=%d", srv, i) })
	t.Logf("%d answers with a 64 KiB status line: %d MiB held, %d MiB freed with the Transport", reads, held>>20, freed>>20)
	if held > attack91Bound {
		t.Errorf("the read cache holds %d MiB (%d MiB freed with the Transport) after %d empty answers whose status lines are 64 KiB of leading spaces; its bound is 64 MiB, status lines counted", held>>20, freed>>20, reads)
	}
}

// TestAttack91CacheStatusLineJustPastAPage: the promise above, "counting the
// memory of ... status lines".
//
// Empty 200s from a loopback server whose status line is 32,769 bytes
// ("HTTP/1.1 200 " and a long reason phrase): the allocator gives a string
// of more than 32 KiB whole 8 KiB pages, 40,960 bytes, while the cache
// counts a status line at its length (the headers' strings are counted as
// the allocator rounds them, the status line is not).
func TestAttack91CacheStatusLineJustPastAPage(t *testing.T) {
	racebuild.Skip(t, "heap figures of a 64 MiB cache")
	line := "HTTP/1.1 200 " + strings.Repeat("R", 32769-len("HTTP/1.1 200 "))
	resp := line + "\r\nContent-Length: 0\r\n\r\n"
	srv := attack91Raw(t, func(*http.Request) string { return resp })
	const reads = 2600
	held, freed := attack91Fill(t, &http.Transport{}, reads, func(i int) string { return fmt.Sprintf("%s/users/me/profile?n=%d", srv, i) })
	t.Logf("%d answers with a 32,769-byte status line: %d MiB held, %d MiB freed with the Transport", reads, held>>20, freed>>20)
	if held > attack91Bound {
		t.Errorf("the read cache holds %d MiB (%d MiB freed with the Transport) after %d empty answers with 32,769-byte status lines; its bound is 64 MiB, status lines counted", held>>20, freed>>20, reads)
	}
}

// TestAttack91CacheKeyJustPastAPage: the promise above, "counting the memory
// of ... keys".
//
// Empty answers to reads whose request URI is 32,769 bytes: the cache
// keeps its own copy of the URI (readKey.owned), a string the allocator
// gives 40,960 bytes, and counts the key at its length.
func TestAttack91CacheKeyJustPastAPage(t *testing.T) {
	racebuild.Skip(t, "heap figures of a 64 MiB cache")
	base := attack91RT(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	})
	prefix := "/users/me/profile?n="
	const reads = 2600
	held, freed := attack91Fill(t, base, reads, func(i int) string {
		q := fmt.Sprintf("%s%06d&p=", prefix, i)
		return "https://profile.xboxlive.com" + q + strings.Repeat("p", 32769-len(q))
	})
	t.Logf("%d answers to 32,769-byte URIs: %d MiB held, %d MiB freed with the Transport", reads, held>>20, freed>>20)
	if held > attack91Bound {
		t.Errorf("the read cache holds %d MiB (%d MiB freed with the Transport) after %d empty answers to reads of 32,769-byte URIs; its bound is 64 MiB, keys counted", held>>20, freed>>20, reads)
	}
}

// TestAttack91CacheHeaderValuesCutFromALargerString: the promise above,
// "counting the memory of ... headers".
//
// A base RoundTripper that builds its own header map whose values are
// cut out of a larger string it holds (as one that parses a recorded or
// raw answer would): http.Header.Clone copies the map and the value
// array, not the strings, so each 1-byte value keeps its 256 KiB string,
// and the cache counts 1 byte. (The cache copies its keys' strings for
// this very reason, readKey.owned; not the header's.)
func TestAttack91CacheHeaderValuesCutFromALargerString(t *testing.T) {
	racebuild.Skip(t, "heap figures of a 64 MiB cache")
	base := attack91RT(func(r *http.Request) (*http.Response, error) {
		raw := strings.Repeat("v", 256<<10) // the answer as received, a new string each time
		return &http.Response{StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{"X-A": {raw[:1]}}, Body: http.NoBody, Request: r}, nil
	})
	const reads = 400
	held, freed := attack91Fill(t, base, reads, func(i int) string { return fmt.Sprintf("https://profile.xboxlive.com/users/me/profile?n=%d", i) })
	t.Logf("%d answers with a 1-byte header value cut from 256 KiB: %d MiB held, %d MiB freed with the Transport", reads, held>>20, freed>>20)
	if held > attack91Bound {
		t.Errorf("the read cache holds %d MiB (%d MiB freed with the Transport) after %d answers whose one header value is 1 byte of a 256 KiB string; its bound is 64 MiB, headers counted", held>>20, freed>>20, reads)
	}
}

// held: the promise above for shapes the header count could miss, each
// through a loopback server whose answers net/http parses: one header name
// with 3,000 values; four values of 40,000 bytes; 60 trailer fields of
// 50 bytes after a chunked body (net/http takes no more than its 4 KiB
// buffer holds); 36 header names of 1 byte with 1-byte values. Each is
// read until the cache reaches one of its bounds (64 MiB or 4,096).
func TestAttack91CacheHeaderShapesLoopback(t *testing.T) {
	racebuild.Skip(t, "heap figures of a 64 MiB cache")
	many := func() string {
		var b strings.Builder
		b.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n")
		for i := range 3000 {
			fmt.Fprintf(&b, "X-V: v%04d\r\n", i)
		}
		return b.String() + "\r\n"
	}()
	long := func() string {
		var b strings.Builder
		b.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n")
		for i := range 4 {
			fmt.Fprintf(&b, "X-L: %c%s\r\n", 'a'+i, strings.Repeat("l", 40000-1))
		}
		return b.String() + "\r\n"
	}()
	trailers := func() string {
		var b strings.Builder
		b.WriteString("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n")
		for i := range 60 { // net/http takes a trailer within its 4 KiB read buffer
			fmt.Fprintf(&b, "T%02d: %s\r\n", i, strings.Repeat("t", 50))
		}
		return b.String() + "\r\n"
	}()
	oneByte := func() string {
		var b strings.Builder
		b.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n")
		for _, c := range "abcdefghijklmnopqrstuvwxyz0123456789" {
			fmt.Fprintf(&b, "%c: %c\r\n", c, c)
		}
		return b.String() + "\r\n"
	}()
	for _, c := range []struct {
		name  string
		resp  string
		reads int
	}{
		{"3000 values of one name", many, 800},
		{"4 values of 40000 bytes", long, 600},
		{"60 trailers", trailers, 4200},
		{"36 names of 1 byte", oneByte, 4200},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := attack91Raw(t, func(*http.Request) string { return c.resp })
			held, freed := attack91Fill(t, &http.Transport{}, c.reads, func(i int) string { return fmt.Sprintf("%s/users/me/profile?n=%d", srv, i) })
			t.Logf("%s: %d reads, %d KiB held, %d KiB freed with the Transport", c.name, c.reads, held>>10, freed>>10)
			if held > attack91Bound {
				t.Errorf("the read cache holds %d MiB after %d answers of %s; its bound is 64 MiB, headers counted", held>>20, c.reads, c.name)
			}
		})
	}
}

// attack91Sizes are header map sizes around the swiss map's table sizes
// (7/8 of 8, 16, 64, 128, 1024 slots and one past).
var attack91Sizes = []int{7, 8, 9, 15, 16, 17, 57, 58, 113, 114, 897, 898}

// held: the promise above for header maps of each of attack91Sizes names,
// their names shared by every answer and their values empty, so that the
// map itself is what the answer holds: built by a base RoundTripper of its
// own (names 1 to 3 bytes, some of 1 byte), and parsed by net/http from a
// loopback server (Content-Length and n-1 names). Each is read 4,200
// times (1,000 for the largest maps, which fill 64 MiB sooner).
func TestAttack91CacheHeaderMapSizes(t *testing.T) {
	racebuild.Skip(t, "heap figures of a 64 MiB cache")
	for _, n := range attack91Sizes {
		reads := 4200
		if n > 500 {
			reads = 1000
		}
		t.Run(fmt.Sprintf("own/%d", n), func(t *testing.T) {
			names := make([]string, n)
			for i := range names {
				switch {
				case i < 200:
					names[i] = string(rune('0' + i%75))[:1] + strings.Repeat("x", i/75) // 1 to 3 bytes
				default:
					names[i] = fmt.Sprintf("N%d", i)
				}
			}
			base := attack91RT(func(r *http.Request) (*http.Response, error) {
				h := make(http.Header, n)
				for _, k := range names {
					h[k] = []string{""}
				}
				return &http.Response{StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
					Header: h, Body: http.NoBody, Request: r}, nil
			})
			held, freed := attack91Fill(t, base, reads, func(i int) string { return fmt.Sprintf("https://profile.xboxlive.com/users/me/profile?n=%d", i) })
			t.Logf("%d names: %d reads, %d KiB held, %d KiB freed", n, reads, held>>10, freed>>10)
			if held > attack91Bound {
				t.Errorf("the read cache holds %d MiB after %d answers of %d header names; its bound is 64 MiB, headers counted", held>>20, reads, n)
			}
		})
		t.Run(fmt.Sprintf("loopback/%d", n), func(t *testing.T) {
			var b strings.Builder
			b.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n")
			for i := range n - 1 {
				fmt.Fprintf(&b, "X%d:\r\n", i)
			}
			resp := b.String() + "\r\n"
			srv := attack91Raw(t, func(*http.Request) string { return resp })
			held, freed := attack91Fill(t, &http.Transport{}, reads, func(i int) string { return fmt.Sprintf("%s/users/me/profile?n=%d", srv, i) })
			t.Logf("%d names: %d reads, %d KiB held, %d KiB freed", n, reads, held>>10, freed>>10)
			if held > attack91Bound {
				t.Errorf("the read cache holds %d MiB after %d answers of %d header names; its bound is 64 MiB, headers counted", held>>20, reads, n)
			}
		})
	}
}

// held: the promise above for the same shapes built by a base RoundTripper
// of its own (each answer's strings its own): 500 trailer fields of 100
// bytes; one header name with 5,000 values of 6 bytes; 256 header names of
// 1 byte (every byte) with 1-byte values.
func TestAttack91CacheHeaderShapesOwn(t *testing.T) {
	racebuild.Skip(t, "heap figures of a 64 MiB cache")
	for _, c := range []struct {
		name  string
		make  func() (h, tr http.Header)
		reads int
	}{
		{"500 trailers", func() (http.Header, http.Header) {
			tr := make(http.Header)
			for i := range 500 {
				tr[fmt.Sprintf("T%03d", i)] = []string{strings.Repeat("t", 99) + fmt.Sprint(i%10)}
			}
			return http.Header{}, tr
		}, 1500},
		{"5000 values of one name", func() (http.Header, http.Header) {
			vs := make([]string, 5000)
			for i := range vs {
				vs[i] = fmt.Sprintf("v%05d", i)
			}
			return http.Header{"X-V": vs}, nil
		}, 1500},
		{"256 names of 1 byte", func() (http.Header, http.Header) {
			h := make(http.Header)
			for i := range 256 {
				h[string([]byte{byte(i)})] = []string{string([]byte{byte(255 - i)})}
			}
			return h, nil
		}, 4200},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := attack91RT(func(r *http.Request) (*http.Response, error) {
				h, tr := c.make()
				return &http.Response{StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
					Header: h, Trailer: tr, Body: io.NopCloser(strings.NewReader("ok")), Request: r}, nil
			})
			held, freed := attack91Fill(t, base, c.reads, func(i int) string { return fmt.Sprintf("https://profile.xboxlive.com/users/me/profile?n=%d", i) })
			t.Logf("%s: %d reads, %d KiB held, %d KiB freed with the Transport", c.name, c.reads, held>>10, freed>>10)
			if held > attack91Bound {
				t.Errorf("the read cache holds %d MiB after %d answers of %s; its bound is 64 MiB, headers counted", held>>20, c.reads, c.name)
			}
		})
	}
}
