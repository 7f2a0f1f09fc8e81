package redisstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
	"github.com/xblgo/fgrl/throttle"
)

// learnScript sets one field of the learned-limits hash unless the hash
// already holds limits of throttle.MaxLearned scopes (two fields each).
var learnScript = redis.NewScript(`
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 or redis.call('HLEN', KEYS[1]) < tonumber(ARGV[3]) then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
end
return 0`)

// fieldPeriods are the windows a learned-limits field's prefix names.
var fieldPeriods = map[string]throttle.Period{"b": throttle.Burst, "s": throttle.Sustain}

// learnedKey is the hash of learned limits: field "b:" or "s:" + scope.
func (s *Store) learnedKey() string {
	prefix := s.Prefix
	if prefix == "" {
		prefix = "fgrl"
	}
	return prefix + ":{learned}"
}

// Learn records the limit of one window of a scope as a service reported
// it, for every transport on the store (throttle.LimitStore).
func (s *Store) Learn(ctx context.Context, scope string, p throttle.Period, limit int) error {
	if !throttle.Learnable(scope, p, limit) {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout())
	defer cancel()
	field := "s:" + scope
	if p == throttle.Burst {
		field = "b:" + scope
	}
	err := learnScript.Run(ctx, s.Client, []string{s.learnedKey()}, field, limit, 2*throttle.MaxLearned).Err()
	if err != nil && err != redis.Nil {
		return fmt.Errorf("%w: learn: %w", ErrUnavailable, err)
	}
	return nil
}

// Learned returns the limits learned so far by scope (throttle.LimitStore).
// Fields it cannot read are skipped; at most throttle.MaxLearned scopes are
// returned.
func (s *Store) Learned(ctx context.Context) (map[string]throttle.Limit, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout())
	defer cancel()
	fields, err := s.Client.HGetAll(ctx, s.learnedKey()).Result()
	if err != nil {
		return nil, fmt.Errorf("%w: learned: %w", ErrUnavailable, err)
	}
	out := make(map[string]throttle.Limit)
	for f, v := range fields {
		n, err := strconv.Atoi(v)
		kind, scope, _ := strings.Cut(f, ":")
		p := fieldPeriods[kind]
		l, known := out[scope]
		if err != nil || !throttle.Learnable(scope, p, n) || !known && len(out) >= throttle.MaxLearned {
			continue
		}
		if p == throttle.Burst {
			l.Burst = n
		} else {
			l.Sustain = n
		}
		out[scope] = l
	}
	return out, nil
}
