// Command summary reads Go benchmark output (several rounds of the same
// benchmarks, as -count prints them) and prints, per benchmark and unit, the
// median and the range across rounds, and the ratios bench/run.sh asks for,
// each computed round by round and summarised the same way. BENCHMARKS.md
// quotes these lines.
//
//	summary [-overhead 'BASE A B']... [-ratio 'A B UNIT']... < output
//
// -overhead prints (A − BASE) / (B − BASE) in ns/op: A's cost over a bare
// base relative to B's. -ratio prints A / B in UNIT. Names are benchmark
// names without the "Benchmark" prefix; the -N GOMAXPROCS suffix may be left
// out when one GOMAXPROCS was run (runs at -cpu 1 and 2 stay apart).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

type list []string

func (l *list) String() string     { return strings.Join(*l, "; ") }
func (l *list) Set(s string) error { *l = append(*l, s); return nil }

func main() {
	var overheads, ratios list
	flag.Var(&overheads, "overhead", "'BASE A B': (A-BASE)/(B-BASE) in ns/op, round by round")
	flag.Var(&ratios, "ratio", "'A B UNIT': A/B in UNIT, round by round")
	flag.Parse()
	r, err := parse(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "summary:", err)
		os.Exit(1)
	}
	r.print(os.Stdout)
	for _, o := range overheads {
		f := strings.Fields(o)
		if len(f) != 3 {
			fmt.Fprintf(os.Stderr, "summary: -overhead %q: want 'BASE A B'\n", o)
			os.Exit(2)
		}
		a, b := r.sub(f[1], f[0], "ns/op"), r.sub(f[2], f[0], "ns/op")
		fmt.Printf("overhead %s / overhead %s: %s\n", f[1], f[2], spread(div(a, b), "x"))
	}
	for _, q := range ratios {
		f := strings.Fields(q)
		if len(f) != 3 {
			fmt.Fprintf(os.Stderr, "summary: -ratio %q: want 'A B UNIT'\n", q)
			os.Exit(2)
		}
		fmt.Printf("%s / %s (%s): %s\n", f[0], f[1], f[2], spread(div(r.get(f[0], f[2]), r.get(f[1], f[2])), "x"))
	}
}

// results holds each benchmark's values per unit, in round order.
type results struct {
	names  []string // in first-seen order
	values map[string]map[string][]float64
	units  map[string][]string
}

var line = regexp.MustCompile(`^Benchmark(\S+)\s+\d+\s+(.*)$`)

// parse reads benchmark lines; other lines are ignored. A line longer than
// 1 MiB is an error rather than a hang or a silent cut.
func parse(in io.Reader) (*results, error) {
	r := &results{values: map[string]map[string][]float64{}, units: map[string][]string{}}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		m := line.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		name, f := m[1], strings.Fields(m[2])
		if r.values[name] == nil {
			r.names = append(r.names, name)
			r.values[name] = map[string][]float64{}
		}
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			unit := f[i+1]
			if r.values[name][unit] == nil {
				r.units[name] = append(r.units[name], unit)
			}
			r.values[name][unit] = append(r.values[name][unit], v)
		}
	}
	return r, sc.Err()
}

func (r *results) print(w io.Writer) {
	for _, n := range r.names {
		parts := make([]string, 0, len(r.units[n]))
		for _, u := range r.units[n] {
			parts = append(parts, spread(r.values[n][u], " "+u))
		}
		fmt.Fprintf(w, "%s: %s\n", n, strings.Join(parts, ", "))
	}
}

// get returns name's values in unit; name may leave out the GOMAXPROCS
// suffix when only one name has it.
func (r *results) get(name, unit string) []float64 {
	if v, ok := r.values[name]; ok {
		return v[unit]
	}
	var found []float64
	for _, n := range r.names {
		if stem, suffix, ok := cutSuffix(n); ok && stem == name && suffix != "" {
			if found != nil {
				return nil // ambiguous: -cpu ran several
			}
			found = r.values[n][unit]
		}
	}
	return found
}

// cutSuffix splits "Name-2" into "Name" and "2".
func cutSuffix(n string) (stem, suffix string, ok bool) {
	i := strings.LastIndexByte(n, '-')
	if i < 0 {
		return n, "", false
	}
	if _, err := strconv.Atoi(n[i+1:]); err != nil {
		return n, "", false
	}
	return n[:i], n[i+1:], true
}

// sub is a − b round by round.
func (r *results) sub(a, b, unit string) []float64 {
	x, y := r.get(a, unit), r.get(b, unit)
	out := make([]float64, min(len(x), len(y)))
	for i := range out {
		out[i] = x[i] - y[i]
	}
	return out
}

func div(x, y []float64) []float64 {
	out := make([]float64, 0, min(len(x), len(y)))
	for i := range min(len(x), len(y)) {
		if y[i] != 0 {
			out = append(out, x[i]/y[i])
		}
	}
	return out
}

// spread formats values as "median (min–max)" with a unit suffix, or "n/a".
func spread(v []float64, unit string) string {
	if len(v) == 0 {
		return "n/a"
	}
	s := slices.Sorted(slices.Values(v))
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	if len(s) == 1 {
		return num(med) + unit
	}
	return fmt.Sprintf("%s%s (%s–%s)", num(med), unit, num(s[0]), num(s[len(s)-1]))
}

func num(f float64) string {
	switch a := max(f, -f); {
	case a >= 100:
		return strconv.FormatFloat(f, 'f', 0, 64)
	case a >= 1:
		return strconv.FormatFloat(f, 'f', 2, 64)
	}
	return strconv.FormatFloat(f, 'f', 3, 64)
}
