package datafile_test

import (
	"bytes"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// attack71Nested is a JSON file of depth levels, each an object of members
// padding it to n/depth bytes and, last, the member "k" holding the next
// level; the deepest "k" is -1. It returns the file and the field of
// that value ("k.k.k…").
func attack71Nested(n, depth int, pad func(b *strings.Builder, i int)) ([]byte, string) {
	var b strings.Builder
	per := n/depth - 8192
	for d := 0; d < depth; d++ {
		b.WriteString("{")
		start := b.Len()
		for i := 0; b.Len()-start < per; i++ {
			pad(&b, i)
		}
		b.WriteString("\"k\":")
	}
	b.WriteString("-1")
	b.WriteString(strings.Repeat("}", depth))
	return []byte(b.String()), strings.TrimSuffix(strings.Repeat("k.", depth), ".")
}

// held: a check naming a member at the end of huge objects at many
// levels (60 levels of a 1 MiB file (16 MiB when helper 185 ran it), each padded by many members, by
// long strings, or by names that share a long start with the field) is
// placed in time in proportion to the file: 10 times the bytes take at
// most 30 times the time (the best of two), and placing it allocates at
// most twice the file's bytes more than the read alone. Promised (package doc): "Reading a file takes
// time and memory linear in its length."
func TestAttack71LocateDeepHugeObjectsLinear(t *testing.T) {
	pads := map[string]func(b *strings.Builder, i int){
		"members": func(b *strings.Builder, i int) { b.WriteString("\"p" + strconv.Itoa(i) + "\":[1,{\"q\":2}],\n") },
		"strings": func(b *strings.Builder, i int) {
			b.WriteString("\"p" + strconv.Itoa(i) + "\":\"" + strings.Repeat("x", 4096) + "\",\n")
		},
		"prefix names": func(b *strings.Builder, i int) {
			b.WriteString("\"" + strings.Repeat("k.", 60)[:2*(i%59)+1] + "z" + strconv.Itoa(i) + "\":0,\n")
		},
	}
	for name, pad := range pads {
		run := func(n int) (time.Duration, time.Duration, int64, int) {
			in, field := attack71Nested(n, 60, pad)
			best, base := time.Duration(1<<62), time.Duration(1<<62)
			var extra int64
			for range 2 {
				var v any
				var m0, m1, m2 runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&m0)
				t0 := time.Now()
				_ = attack71Kind.Read(bytes.NewReader(in), &v, nil)
				base = min(base, time.Since(t0))
				runtime.ReadMemStats(&m1)
				runtime.GC()
				runtime.ReadMemStats(&m1)
				plain := m1.TotalAlloc - m0.TotalAlloc
				t0 = time.Now()
				e := attack71Read(t, in, field)
				best = min(best, time.Since(t0))
				runtime.ReadMemStats(&m2)
				extra = int64(m2.TotalAlloc-m1.TotalAlloc) - int64(plain)
				if e.Line != strings.Count(string(in), "\n")+1 {
					t.Fatalf("%s: %d bytes: %v: line %d, want %d", name, len(in), e, e.Line, strings.Count(string(in), "\n")+1)
				}
			}
			return best, base, extra, len(in)
		}
		d0, b0, a0, n0 := run(1 << 20 / 10)
		d1, b1, a1, n1 := run(1 << 20)
		t.Logf("%s: %d bytes %v (no check %v, %d more alloc); %d bytes %v (no check %v, %d more alloc)", name, n0, d0, b0, a0, n1, d1, b1, a1)
		if a1 > 2*int64(n1) {
			t.Errorf("%s: placing the field allocated %d bytes more than the read alone for %d bytes", name, a1, n1)
		}
		if float64(d1) > 30*float64(d0)*float64(n1)/float64(n0)/10 {
			t.Errorf("%s: %d bytes %v, %d bytes %v", name, n0, d0, n1, d1)
		}
	}
}
