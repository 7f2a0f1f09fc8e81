package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/throttle"
)

// fieldPeriods are the windows a learned-limits field's prefix names.
var fieldPeriods = map[string]throttle.Period{"b": throttle.Burst, "s": throttle.Sustain}

// learnedKey is the hash of learned records: field "b:" or "s:" + scope.
func (s *Store) learnedKey() string {
	prefix := s.Prefix
	if prefix == "" {
		prefix = "fgrl"
	}
	return prefix + ":{learned}"
}

// Learn records one 429 body's report for every transport on the store
// (throttle.LimitStore), by the rule throttle.LimitStore.Learn describes,
// in one script run. At most throttle.MaxLearned scopes are kept (two
// windows each); the hash expires throttle.LearnedFor after its last
// report, as every record in it does.
func (s *Store) Learn(ctx context.Context, r throttle.LimitReport) (throttle.Learned, error) {
	if !throttle.Learnable(r) {
		return throttle.Learned{}, nil
	}
	field := "s:" + r.Scope
	if r.Period == throttle.Burst {
		field = "b:" + r.Scope
	}
	now, err := s.now(r.At)
	if err != nil {
		return throttle.Learned{}, err
	}
	v, err := bounded(ctx, s, func(ctx context.Context) ([]int64, error) {
		return learnScript.Run(ctx, s.Client, []string{s.learnedKey()}, field, r.Limit, r.User, now,
			r.Period.Duration().Microseconds(), throttle.LearnedFor.Microseconds(), 2*throttle.MaxLearned).Int64Slice()
	})
	if err != nil {
		return throttle.Learned{}, fmt.Errorf("%w: learn: %w", ErrUnavailable, clipped{err})
	}
	if len(v) != 2 || v[0] <= 0 {
		return throttle.Learned{}, nil
	}
	return throttle.Learned{Scope: r.Scope, Period: r.Period, Limit: int(v[0]), Until: time.UnixMicro(v[1])}, nil
}

// Learned returns the limits in force at now (throttle.LimitStore); with
// CallerTime unset, at Redis's now. Records it cannot read are skipped; at
// most both windows of throttle.MaxLearned scopes are returned.
func (s *Store) Learned(ctx context.Context, now time.Time) ([]throttle.Learned, error) {
	at, err := s.now(now)
	if err != nil {
		return nil, err
	}
	v, err := bounded(ctx, s, func(ctx context.Context) ([]string, error) {
		return learnedScript.Run(ctx, s.Client, []string{s.learnedKey()}, at).StringSlice()
	})
	if err != nil {
		return nil, fmt.Errorf("%w: learned: %w", ErrUnavailable, clipped{err})
	}
	var out []throttle.Learned
	for i := 0; i+3 <= len(v); i += 3 {
		kind, scope, _ := strings.Cut(v[i], ":")
		n, err1 := strconv.Atoi(v[i+1])
		until, err2 := strconv.ParseInt(v[i+2], 10, 64)
		r := throttle.LimitReport{Scope: scope, Period: fieldPeriods[kind], Limit: n}
		if err1 != nil || err2 != nil || !throttle.Learnable(r) || len(out) >= 2*throttle.MaxLearned {
			continue
		}
		out = append(out, throttle.Learned{Scope: scope, Period: r.Period, Limit: n, Until: time.UnixMicro(until)})
	}
	return out, nil
}

// bounded runs f within the store's timeout and ctx, on the node that
// holds the learned limits: while decisions find that node down it fails
// at once, and a client that ignores context deadlines runs f in a
// goroutine the store stops waiting for (as exec does). Only decisions
// mark a node down or up: learned limits are read and written too seldom
// to judge it by.
func bounded[T any](ctx context.Context, s *Store, f func(context.Context) (T, error)) (T, error) {
	var zero T
	if s.Client == nil {
		return zero, errors.New("no client")
	}
	n, err := s.node(ctx, s.learnedKey())
	if err != nil {
		return zero, err
	}
	if n.downUntil.Load() != 0 { // a decision probes it, not this
		return zero, errors.New("the node is down")
	}
	return within(ctx, s, f)
}

// safely runs f, a panic in it (clientPanic) its error.
func safely[T any](ctx context.Context, f func(context.Context) (T, error)) (v T, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = clientPanic(r)
		}
	}()
	return f(ctx)
}

// clientPanic is the error of a panic in the Redis client: go-redis makes
// what an answer announces (a bulk string or an array whose length is near
// 2^63 panics in makeslice), and removes the connection before it panics
// again; the store takes that for a node it cannot use.
func clientPanic(r any) error {
	return fmt.Errorf("%w: the Redis client failed on an answer it could not read: %s", ErrUnavailable, safetext.Clip(fmt.Sprint(r), 120))
}

// within runs f within the store's timeout and ctx; a client that ignores
// context deadlines, or a ctx that can be cancelled, runs f in a goroutine
// the store stops waiting for.
func within[T any](ctx context.Context, s *Store, f func(context.Context) (T, error)) (T, error) {
	var zero T
	// Inline only under a ctx no one can cancel: go-redis turns a
	// deadline into its socket's, not a cancel (as exec runs a batch).
	inline := honoursDeadlines(s.Client) && ctx.Done() == nil
	ctx, cancel := context.WithTimeout(ctx, s.timeout())
	defer cancel()
	if inline {
		return safely(ctx, f)
	}
	type answer struct {
		v   T
		err error
	}
	out := make(chan answer, 1)
	go func() {
		v, err := safely(ctx, f)
		out <- answer{v, err}
	}()
	select {
	case a := <-out:
		return a.v, a.err
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}
