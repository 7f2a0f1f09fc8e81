package transport_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/xblgo/fgrl/internal/racebuild"
)

func attack88Heap() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// attack88CacheBound is the godoc's bound (64 MiB) and room for what a
// cache of 4,096 small entries holds besides (maps, slices), 8 MiB.
const attack88CacheBound = 64<<20 + 8<<20

// TestAttack88CacheBytesWithManyHeaderNames: ReadCacheTTL's godoc: "The
// cache holds at most 4,096 answers and 64 MiB, counting the memory of
// bodies, headers, status lines and keys".
//
// Answers from a loopback server with 1,800 header fields each, a short
// distinct name with an empty value (20 KB on the wire, far within
// net/http's 10 MB header limit), 800 distinct reads of one user.
func TestAttack88CacheBytesWithManyHeaderNames(t *testing.T) {
	racebuild.Skip(t, "heap figures of a 64 MiB cache, 13 s under the detector")
	const fields, reads = 1800, 800 // 1,800: just past 7/8 of a power of two, a map sized for it is half empty
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		for i := range fields {
			h[fmt.Sprintf("K%06d", i)] = []string{""}
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	tr := attack88Transport(base)
	before := attack88Heap()
	for i := range reads {
		req := attack88Req(context.Background(), fmt.Sprintf("%s/users/me/profile?n=%d", srv.URL, i), attack88Auth("1111", "token-a"))
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	base.CloseIdleConnections()
	held := attack88Heap() - before
	runtime.KeepAlive(tr)
	tr = nil
	freed := held - (attack88Heap() - before) // what the Transport, its cache, held
	if held > attack88CacheBound {
		t.Errorf("the read cache holds %d MiB after %d answers of %d header fields (%d MiB freed with the Transport); its bound is 64 MiB, headers counted", held>>20, reads, fields, freed>>20)
	}
}

// TestAttack88CacheBytesLargeBodiesLongKeys: the same bound, with answers
// of 1 MiB, URLs of 32 KiB and a 16 KiB Accept-Language, many users.
//
// held.
func TestAttack88CacheBytesLargeBodiesLongKeys(t *testing.T) {
	racebuild.Skip(t, "heap figures of a 64 MiB cache, 13 s under the detector")
	body := strings.Repeat("b", 1<<20)
	base := &attack88Base{answer: func(r *http.Request) *http.Response { return attack88OK(r, body, nil) }}
	tr := attack88Transport(base)
	before := attack88Heap()
	long := strings.Repeat("x", 32<<10)
	lang := strings.Repeat("l", 16<<10)
	for i := range 200 {
		req := attack88Req(context.Background(), fmt.Sprintf("%s&n=%d&pad=%s", attack88URL, i, long), attack88Auth(fmt.Sprint(1000+i%10), "token"))
		req.Header.Set("Accept-Language", lang)
		if _, err := attack88Do(t, tr, req); err != nil {
			t.Fatal(err)
		}
	}
	held := attack88Heap() - before
	runtime.KeepAlive(tr)
	if held > attack88CacheBound {
		t.Errorf("the read cache holds %d MiB; its bound is 64 MiB", held>>20)
	}
}

// TestAttack88CacheBytesManyKeysNoBody: the same bound with 20,000
// distinct reads (users and URLs) of 2 KiB URLs and empty answers: the
// 4,096 answers bound.
//
// held.
func TestAttack88CacheBytesManyKeysNoBody(t *testing.T) {
	base := &attack88Base{answer: func(r *http.Request) *http.Response { return attack88OK(r, "", nil) }}
	tr := attack88Transport(base)
	before := attack88Heap()
	pad := strings.Repeat("p", 2<<10)
	for i := range 20000 {
		req := attack88Req(context.Background(), fmt.Sprintf("%s&n=%d&%s", attack88URL, i, pad), attack88Auth(fmt.Sprint(i), "token"))
		if _, err := attack88Do(t, tr, req); err != nil {
			t.Fatal(err)
		}
	}
	held := attack88Heap() - before
	runtime.KeepAlive(tr)
	if held > attack88CacheBound {
		t.Errorf("the read cache holds %d MiB; its bound is 64 MiB", held>>20)
	}
	t.Logf("held %d KiB", held>>10)
}
