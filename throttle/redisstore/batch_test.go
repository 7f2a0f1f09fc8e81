package redisstore

import (
	"context"
	"encoding/binary"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"
	"github.com/xblgo/fgrl/internal/redistest"
	"github.com/xblgo/fgrl/throttle"
)

// answer packs values as the scripts answer: little-endian doubles.
func answer(v ...float64) string {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	return string(b)
}

func TestSplit(t *testing.T) {
	tests := []struct {
		name    string
		res     string
		decided int
		want    [][]int64
		err     string
	}{
		{"one decision", answer(3, 1, -2, 1e15), 1, [][]int64{{1, -2, 1e15}}, ""},
		{"two, one empty", answer(0, 2, 7, 8), 2, [][]int64{{}, {7, 8}}, ""},
		{"fractions truncate as Redis's own integer replies do", answer(1, 2.9), 1, [][]int64{{2}}, ""},
		{"a decision missing", answer(1, 5), 2, nil, "answered 1 of 2 decisions"},
		{"a count beyond the answer", answer(4, 1, 2), 1, nil, "answered 0 of 1"},
		{"a negative count", answer(-1), 1, nil, "answered 0 of 1"},
		{"values left over", answer(1, 5, 6), 1, nil, "1 values more than 1 decisions"},
		{"not whole values", answer(1, 5)[:12], 1, nil, "12 bytes"},
		{"empty", "", 1, nil, "answered 0 of 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			jobs := make([]int, tt.decided)
			for i := range jobs {
				jobs[i] = i
			}
			out := make([]result, tt.decided)
			err := split(tt.res, jobs, out)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("split = %v, want an error saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := make([][]int64, len(out))
			for i, r := range out {
				got[i] = r.res
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("split (-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzSplit: any answer, however malformed, gives each decision its values
// or an error: no panic, no values beyond the answer.
func FuzzSplit(f *testing.F) {
	f.Add(answer(3, 1, 2, 3, 0), 2)
	f.Add(answer(7, 0, 0, 1, 1, 15e6, 300e6, 0), 1)
	f.Add(answer(1e300), 1)
	f.Add(answer(math.NaN(), 1), 1)
	f.Fuzz(func(t *testing.T, res string, decided int) {
		if decided < 0 || decided > 100 {
			return
		}
		jobs := make([]int, decided)
		for i := range jobs {
			jobs[i] = i
		}
		out := make([]result, decided)
		if err := split(res, jobs, out); err != nil {
			return
		}
		n := 0
		for _, r := range out {
			n += 1 + len(r.res)
		}
		if n*8 != len(res) {
			t.Errorf("split accounted for %d values of %d bytes", n, len(res))
		}
	})
}

func TestPackRoundTrip(t *testing.T) {
	in := []int64{0, 1, -1, 1 << 30, 300_000_000, 1 << 52}
	out := make([]result, 1)
	if err := split(answer(float64(len(in)))+string(pack(in...)), []int{0}, out); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, out[0].res); diff != "" {
		t.Errorf("pack, then split (-want +got):\n%s", diff)
	}
}

// TestCommands: on one server a batch's decisions share script runs of at
// most maxPerCommand, one script per run; on a Cluster only decisions with
// one hash tag share a run.
func TestCommands(t *testing.T) {
	single := &Store{Client: redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})}
	cluster := &Store{Client: redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}})}
	defer single.Client.Close()
	defer cluster.Client.Close()
	takes := func(n int, tag func(i int) string) []*job {
		var b []*job
		for i := range n {
			b = append(b, &job{script: takeScript, keys: []string{"fgrl:{" + tag(i) + "}:s"}})
		}
		return b
	}
	distinct := func(i int) string { return strconv.Itoa(i) }
	same := func(int) string { return "x" }
	mixed := append(takes(3, distinct), &job{script: budgetScript, keys: []string{"fgrl:{b}:log", "fgrl:{b}:meta"}})
	mixed = append(mixed, takes(2, same)...)
	tests := []struct {
		name  string
		store *Store
		batch []*job
		want  [][]int
	}{
		{"single, one decision", single, takes(1, distinct), [][]int{{0}}},
		{"single, 150 decisions", single, takes(150, distinct), [][]int{seq(0, 64), seq(64, 128), seq(128, 150)}},
		{"single, two scripts", single, mixed, [][]int{{0, 1, 2, 4, 5}, {3}}},
		{"cluster, distinct tags", cluster, takes(3, distinct), [][]int{{0}, {1}, {2}}},
		{"cluster, one tag", cluster, takes(3, same), [][]int{{0, 1, 2}}},
		{"cluster, two scripts", cluster, mixed, [][]int{{0}, {1}, {2}, {3}, {4, 5}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got [][]int
			for _, c := range tt.store.commands(tt.batch) {
				got = append(got, c.jobs)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("commands (-want +got):\n%s", diff)
			}
		})
	}
}

func seq(from, to int) []int {
	var s []int
	for i := from; i < to; i++ {
		s = append(s, i)
	}
	return s
}

// TestScriptsReloaded: after SCRIPT FLUSH, a decision still gets its answer
// (EVALSHA answers NOSCRIPT and the store loads the script with EVAL).
func TestScriptsReloaded(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client()
	s := &Store{Client: c}
	k := throttle.Key{User: "u", Title: "t", Scope: "profile"}
	l := throttle.Limit{Burst: 10, Sustain: 30}
	for i := 1; i <= 2; i++ {
		if err := c.ScriptFlush(context.Background()).Err(); err != nil {
			t.Fatal(err)
		}
		d, err := s.Take(context.Background(), k, l, time.Now())
		if err != nil || d.Burst.Count != i {
			t.Fatalf("take %d after SCRIPT FLUSH: %+v, %v", i, d, err)
		}
		if _, err := s.Reserve(context.Background(), k, l, time.Now(), 0); err != nil {
			t.Fatalf("reserve %d after SCRIPT FLUSH: %v", i, err)
		}
	}
}

// TestScriptRefusesMalformedArguments: the scripts answer a clear error, not
// a wrong decision, to arguments of the wrong size.
func TestScriptRefusesMalformedArguments(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client()
	ctx := context.Background()
	tests := []struct {
		name string
		sc   *script
		keys []string
		args []any
		want string
	}{
		{"take, short argument", takeScript, []string{"k"}, []any{"short"}, "has 5 bytes of arguments, want 40"},
		{"take, keys and arguments differ", takeScript, []string{"k", "j"}, []any{string(pack(1, 1, 0, 0, 0))}, "2 keys and 1 decisions"},
		{"budget, too few arguments", budgetScript, []string{"l", "m"}, []any{string(pack(1, 2))}, "16 bytes of arguments"},
		{"budget, unknown op", budgetScript, []string{"l", "m"}, []any{string(pack(9, 1, 1, 0, 0))}, "unknown op 9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.sc.Run(ctx, c, tt.keys, tt.args...).Err()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("script = %v, want an error saying %q", err, tt.want)
			}
		})
	}
}
