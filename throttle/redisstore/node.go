package redisstore

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// probeEvery is how long a node whose batch failed is left alone before one
// call tries it again.
const probeEvery = time.Second

// node is one Redis server the store sends to: its own batches, and a
// circuit that fails its keys at once while it is down. Time here is the
// wall clock: it paces network retries, not FGRL decisions.
type node struct {
	addr      string
	batch     batcher
	downUntil atomic.Int64 // unix ns; 0 when up
	silent    atomic.Int32 // decisions in a row ended by their callers' deadlines unanswered
}

// node returns the node that holds key: its Cluster master for a
// ClusterClient, else the one server.
func (s *Store) node(ctx context.Context, key string) (*node, error) {
	addr := ""
	if cc, ok := s.Client.(*redis.ClusterClient); ok {
		// Within the store's timeout: the first lookup asks a seed node
		// for the slots, and a silent one would hold the caller for
		// go-redis's own read timeout.
		m, err := within(ctx, s, func(ctx context.Context) (*redis.Client, error) { return cc.MasterForKey(ctx, key) })
		if err != nil {
			return nil, s.unavailable(err)
		}
		addr = m.Options().Addr
	}
	if n, ok := s.nodes.Load(addr); ok {
		return n.(*node), nil
	}
	n, _ := s.nodes.LoadOrStore(addr, &node{addr: addr})
	return n.(*node), nil
}

// admit fails at once while the node is down, except for one call per
// probeEvery, which goes through as the probe.
func (n *node) admit() error {
	until := n.downUntil.Load()
	if until == 0 {
		return nil
	}
	now := time.Now().UnixNano()
	if now >= until && n.downUntil.CompareAndSwap(until, now+int64(probeEvery)) {
		return nil // this call probes
	}
	where := "Redis"
	if n.addr != "" {
		where = "Redis node " + n.addr
	}
	return fmt.Errorf("%w: %s is down; it is tried again within %v", ErrUnavailable, where, probeEvery)
}

// failed marks the node down after a batch could not reach it; ok marks it
// up.
func (n *node) failed() { n.downUntil.Store(time.Now().Add(probeEvery).UnixNano()) }
func (n *node) ok() {
	n.downUntil.Store(0)
	n.silent.Store(0)
}

// silentEnds is how many decisions in a row, each ended by its caller's
// deadline before the node answered, mark the node down. One such end is
// the caller's (callersEnd: its deadline gave the node less than half the
// store's Timeout) and does not judge the node; but callers whose
// deadlines are all that short would then never let a silent node be
// judged, and each would wait its whole deadline on it.
const silentEnds = 3

// unanswered counts a decision its caller's deadline ended before the node
// answered, and marks the node down at the silentEnds-th in a row (any
// answer in between starts the count again: ok).
func (n *node) unanswered() {
	if n.silent.Add(1) >= silentEnds {
		n.failed()
	}
}

// IsolatesFailures reports true: the store fails at once for the keys of a
// node that is down and probes it itself, so a transport may keep sending
// every call to it (transport.FailureIsolator).
func (s *Store) IsolatesFailures() bool { return true }
