package redisstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"
	"syscall"
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

// failure packs a decision's error as the scripts do: minus the message's
// length, then the message padded with zero bytes to whole doubles.
func failure(msg string) string {
	return answer(-float64(len(msg))) + msg + strings.Repeat("\x00", (8-len(msg)%8)%8)
}

func TestSplit(t *testing.T) {
	tests := []struct {
		name    string
		res     string
		decided int
		want    [][]int64
		errs    []string // per decision: a text its error holds
		err     string   // the whole answer's error
	}{
		{"one decision", answer(3, 1, -2, 1e15), 1, [][]int64{{1, -2, 1e15}}, nil, ""},
		{"two, one empty", answer(0, 2, 7, 8), 2, [][]int64{{}, {7, 8}}, nil, ""},
		{"fractions truncate as Redis's own integer replies do", answer(1, 2.9), 1, [][]int64{{2}}, nil, ""},
		{"one failed, one decided", failure("WRONGTYPE Operation") + answer(1, 5), 2, [][]int64{nil, {5}}, []string{"WRONGTYPE Operation", ""}, ""},
		{"a message of whole doubles", failure("12345678") + answer(0), 2, [][]int64{nil, {}}, []string{"12345678", ""}, ""},
		{"a message with an escape", failure("bad\x1b[2J"), 1, [][]int64{nil}, []string{`bad\x1b[2J`}, ""},
		{"a message that fills the answer", failure("12345678"), 1, [][]int64{nil}, []string{"12345678"}, ""},
		{"a decision missing", answer(1, 5), 2, nil, nil, "answered 1 of 2 decisions"},
		{"a count beyond the answer", answer(4, 1, 2), 1, nil, nil, "answered 0 of 1"},
		{"a message beyond the answer", answer(-100) + "short", 1, nil, nil, "answered 0 of 1"},
		{"a fractional count", answer(0.5), 1, nil, nil, "answered 0 of 1"},
		{"a count of NaN", answer(math.NaN()), 1, nil, nil, "answered 0 of 1"},
		{"values left over", answer(1, 5, 6), 1, nil, nil, "8 bytes more than 1 decisions"},
		{"not whole values", answer(1, 5)[:12], 1, nil, nil, "answered 0 of 1"},
		{"empty", "", 1, nil, nil, "answered 0 of 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := make([]result, tt.decided)
			err := split(tt.res, seq(0, tt.decided), out)
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
				want := ""
				if tt.errs != nil {
					want = tt.errs[i]
				}
				switch {
				case want == "" && r.err != nil:
					t.Errorf("decision %d: %v", i, r.err)
				case want != "" && (r.err == nil || !strings.Contains(r.err.Error(), want) || !errors.Is(r.err, ErrUnavailable)):
					t.Errorf("decision %d: %v, want an ErrUnavailable saying %q", i, r.err, want)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("split (-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzSplit: any answer, however malformed, gives each decision its values
// or its error, or fails as a whole: no panic, nothing left unsettled.
func FuzzSplit(f *testing.F) {
	f.Add(answer(3, 1, 2, 3, 0), 2)
	f.Add(answer(7, 0, 0, 1, 1, 15e6, 300e6, 0), 1)
	f.Add(failure("WRONGTYPE")+answer(0), 2)
	f.Add(answer(-9.2e18), 1)
	f.Add(answer(1e300), 1)
	f.Add(answer(math.NaN(), 1), 1)
	f.Fuzz(func(t *testing.T, res string, decided int) {
		if decided < 0 || decided > 100 {
			return
		}
		out := make([]result, decided)
		if err := split(res, seq(0, decided), out); err != nil {
			return
		}
		for i, r := range out {
			if (r.res == nil) == (r.err == nil) {
				t.Errorf("decision %d: values %v and error %v", i, r.res, r.err)
			}
			if r.err != nil && len(r.err.Error()) > len(ErrUnavailable.Error())+2+maxScriptError {
				t.Errorf("decision %d: an error of %d bytes", i, len(r.err.Error()))
			}
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
// most maxPerCommand, one script per run, and runs may cross hash tags; on
// a Cluster, or a server that refused a run across slots, only decisions
// with one hash tag share a run.
func TestCommands(t *testing.T) {
	single := &Store{Client: redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})}
	cluster := &Store{Client: redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}})}
	proxied := &Store{Client: redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})}
	proxied.perTag.Store(true)
	defer single.Client.Close()
	defer cluster.Client.Close()
	defer proxied.Client.Close()
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
		name     string
		store    *Store
		batch    []*job
		want     [][]int
		crossing bool
	}{
		{"single, one decision", single, takes(1, distinct), [][]int{{0}}, true},
		{"single, 150 decisions", single, takes(150, distinct), [][]int{seq(0, 64), seq(64, 128), seq(128, 150)}, true},
		{"single, two scripts", single, mixed, [][]int{{0, 1, 2, 4, 5}, {3}}, true},
		{"cluster, distinct tags", cluster, takes(3, distinct), [][]int{{0}, {1}, {2}}, false},
		{"cluster, one tag", cluster, takes(3, same), [][]int{{0, 1, 2}}, false},
		{"cluster, two scripts", cluster, mixed, [][]int{{0}, {1}, {2}, {3}, {4, 5}}, false},
		{"single, after a run was refused across slots", proxied, mixed, [][]int{{0}, {1}, {2}, {3}, {4, 5}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got [][]int
			cmds, crossing := tt.store.commands(tt.batch)
			for _, c := range cmds {
				got = append(got, c.jobs)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("commands (-want +got):\n%s", diff)
			}
			if crossing != tt.crossing {
				t.Errorf("runs may cross hash tags: %v, want %v", crossing, tt.crossing)
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

// TestDecisionFailsAlone: a decision that fails inside a script run (a key
// of another type, an unknown operation) gets its own error, and the
// decisions it shares the run with get their answers.
func TestDecisionFailsAlone(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client()
	ctx := context.Background()
	if err := c.LPush(ctx, "list", "x").Err(); err != nil {
		t.Fatal(err)
	}
	take := string(pack(10, 30, 0, 0, 0))
	reserve := string(pack(opReserve, 10, 30, 0, 0, 0, 7)) // maxWait 0, admission id 7
	tests := []struct {
		name string
		sc   *script
		keys []string
		args []any
		errs []string // per decision: a text its error holds, or "" for an answer
	}{
		{"take: a list, then a fresh key", takeScript, []string{"list", "fresh"}, []any{take, take}, []string{"WRONGTYPE", ""}},
		{"budget: a list, then a fresh key", budgetScript, []string{"list", "m1", "log2", "m2"}, []any{reserve, reserve}, []string{"WRONGTYPE", ""}},
		{"budget: an unknown op, then a reserve", budgetScript, []string{"l3", "m3", "l4", "m4"}, []any{string(pack(9, 10, 30, 0, 0)), reserve}, []string{"unknown op 9", ""}},
		{"budget: a reserve without an id, then one with", budgetScript, []string{"l5", "m5", "l6", "m6"}, []any{string(pack(opReserve, 10, 30, 0, 0, 0)), reserve}, []string{"needs an admission id", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tt.sc.Run(ctx, c, tt.keys, tt.args...).Text()
			if err != nil {
				t.Fatal(err)
			}
			out := make([]result, len(tt.errs))
			if err := split(res, seq(0, len(out)), out); err != nil {
				t.Fatal(err)
			}
			for i, want := range tt.errs {
				switch {
				case want == "" && (out[i].err != nil || len(out[i].res) == 0):
					t.Errorf("decision %d: %v, %v; want an answer", i, out[i].res, out[i].err)
				case want != "" && (out[i].err == nil || !strings.Contains(out[i].err.Error(), want)):
					t.Errorf("decision %d: %v; want an error saying %q", i, out[i].err, want)
				}
			}
		})
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

// redisError is an answer Redis gave that was an error (go-redis's own
// type for them is internal).
type redisError string

func (e redisError) Error() string { return string(e) }
func (redisError) RedisError()     {}

// TestUnreachable: a node is marked down when it was not reached or did not
// answer, not when it answered with an error (a script's, or a refused
// password, which retrying sooner cannot fix either) or with nothing.
func TestUnreachable(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"no error", nil, false},
		{"no value", redis.Nil, false},
		{"an error answered", redisError("WRONGPASS invalid username-password pair"), false},
		{"an error answered, wrapped", fmt.Errorf("script: %w", redisError("BUSY")), false},
		{"connection refused", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, true},
		{"no answer in time", context.DeadlineExceeded, true},
	}
	for _, tt := range tests {
		if got := unreachable(tt.err); got != tt.want {
			t.Errorf("%s: unreachable(%v) = %v, want %v", tt.name, tt.err, got, tt.want)
		}
	}
}

// TestPipelineSaysWhatFailed: a batch of several script runs, sent as one
// pipeline, to a server that refuses the connection's password gives each
// decision an error naming the cause, not how the commands' empty replies
// read (a lone run, sent without a pipeline, is TestSayWhatFailed's).
func TestPipelineSaysWhatFailed(t *testing.T) {
	srv := redistest.Start(t, "--requirepass", "secret")
	batch := []*job{
		{script: takeScript, keys: []string{"fgrl:{a}:s"}, args: pack(10, 30, 0, 0, 0)},
		{script: budgetScript, keys: []string{"fgrl:{b}:log", "fgrl:{b}:meta"}, args: pack(opReserve, 10, 30, 0, 0, 0, 7)},
	}
	tests := []struct{ name, password, want string }{
		{"wrong password", "wrong", "WRONGPASS"},
		{"no password", "", "NOAUTH"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := redis.NewClient(&redis.Options{Addr: srv.Addr, Password: tt.password})
			defer c.Close()
			s := &Store{Client: c}
			if cmds, _ := s.commands(batch); len(cmds) < 2 {
				t.Fatalf("the batch makes %d script runs, want a pipeline of several", len(cmds))
			}
			for i, r := range s.pipeline(context.Background(), s.Client, batch) {
				if r.err == nil || !strings.Contains(r.err.Error(), tt.want) {
					t.Errorf("decision %d: %v, want an error saying %q", i, r.err, tt.want)
				}
			}
		})
	}
}
