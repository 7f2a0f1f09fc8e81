package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const sample = `goos: linux
BenchmarkNoRetry/base-2   	  200000	       200 ns/op	     240 B/op	       4 allocs/op
BenchmarkNoRetry/fgrl-2   	  200000	      1200 ns/op	     783 B/op	       5 allocs/op
BenchmarkNoRetry/rh-2     	  200000	      1000 ns/op	     864 B/op	      11 allocs/op
BenchmarkNoRetry/base-2   	  200000	       300 ns/op	     240 B/op	       4 allocs/op
BenchmarkNoRetry/fgrl-2   	  200000	       900 ns/op	     783 B/op	       5 allocs/op
BenchmarkNoRetry/rh-2     	  200000	      1500 ns/op	     864 B/op	      11 allocs/op
BenchmarkNoRetry/base-2   	  200000	       250 ns/op	     240 B/op	       4 allocs/op
BenchmarkNoRetry/fgrl-2   	  200000	      1250 ns/op	     783 B/op	       5 allocs/op
BenchmarkNoRetry/rh-2     	  200000	      1250 ns/op	     864 B/op	      11 allocs/op
BenchmarkWrk/bare 1 60000 req/s
BenchmarkWrk/mock 1 45000 req/s
`

func TestParseAndPrint(t *testing.T) {
	r, err := parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	r.print(&out)
	want := `NoRetry/base-2: 250 ns/op (200–300), 240 B/op (240–240), 4.00 allocs/op (4.00–4.00)
NoRetry/fgrl-2: 1200 ns/op (900–1250), 783 B/op (783–783), 5.00 allocs/op (5.00–5.00)
NoRetry/rh-2: 1250 ns/op (1000–1500), 864 B/op (864–864), 11.00 allocs/op (11.00–11.00)
Wrk/bare: 60000 req/s
Wrk/mock: 45000 req/s
`
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("print (-want +got):\n%s", diff)
	}
}

func TestRatios(t *testing.T) {
	r, err := parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		got  []float64
		want string
	}{
		// rounds: 1000/800 = 1.25, 600/1200 = 0.5, 1000/1000 = 1
		{"overhead", div(r.sub("NoRetry/fgrl", "NoRetry/base", "ns/op"), r.sub("NoRetry/rh", "NoRetry/base", "ns/op")), "1.00x (0.500–1.25)"},
		{"ratio", div(r.get("Wrk/mock", "req/s"), r.get("Wrk/bare", "req/s")), "0.750x"},
		{"missing", div(r.get("Nope", "ns/op"), r.get("Wrk/bare", "req/s")), "n/a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := spread(tt.got, "x"); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCPUsStayApart(t *testing.T) {
	r, err := parse(strings.NewReader("BenchmarkTake 1 100 ns/op\nBenchmarkTake-2 1 300 ns/op\nBenchmarkOnly-4 1 7 ns/op\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]float64{"Take": r.get("Take", "ns/op"), "Take-2": r.get("Take-2", "ns/op"), "Only": r.get("Only", "ns/op")}
	want := map[string][]float64{"Take": {100}, "Take-2": {300}, "Only": {7}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("get (-want +got):\n%s", diff)
	}
}

func TestLongLineIsAnError(t *testing.T) {
	if _, err := parse(strings.NewReader(strings.Repeat("x", 2<<20))); err == nil {
		t.Error("a 2 MiB line parsed without error")
	}
}

func FuzzParse(f *testing.F) {
	f.Add(sample)
	f.Add("BenchmarkX-2 1 NaN ns/op 1e309 B/op")
	f.Fuzz(func(t *testing.T, in string) {
		r, err := parse(strings.NewReader(in))
		if err != nil {
			return
		}
		var out bytes.Buffer
		r.print(&out)
		for _, n := range r.names {
			for _, u := range r.units[n] {
				spread(div(r.get(n, u), r.get(n, u)), "x")
			}
		}
	})
}
