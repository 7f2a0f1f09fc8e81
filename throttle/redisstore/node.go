package redisstore

import (
	"context"
	"fmt"
	"sync"
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
	shard     atomic.Pointer[redis.Client] // a Ring's shard, as the Ring last named it: its batches go to it (node.client)
	batch     batcher
	downUntil atomic.Int64 // unix ns; 0 when up
	checking  atomic.Bool  // a check (see Store.unanswered) is asking the node whether it answers at all

	mu    sync.Mutex
	owes  []owed      // releases refused while the node was down (Store.giveBack), at most maxUndoing
	owing atomic.Bool // owes is not empty: a batch that finds the node up takes no lock otherwise
}

// owe keeps a release to send when the node is next found up; past
// maxUndoing owed, it is dropped (its slot stays booked until its window
// passes: spent, never overspent).
func (n *node) owe(o owed) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.owes) < maxUndoing {
		n.owes = append(n.owes, o)
		n.owing.Store(true)
	}
}

// takeOwed returns the releases owed and forgets them.
func (n *node) takeOwed() []owed {
	if !n.owing.Load() {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	o := n.owes
	n.owes = nil
	n.owing.Store(false)
	return o
}

// node returns the node that holds key: its Cluster master for a
// ClusterClient, its shard for a Ring, else the one server.
func (s *Store) node(ctx context.Context, key string) (*node, error) {
	addr := ""
	var shard *redis.Client
	if cc, ok := s.Client.(*redis.ClusterClient); ok {
		// Within the store's timeout: the first lookup asks a seed node
		// for the slots, and a silent one would hold the caller for
		// go-redis's own read timeout.
		m, err := within(ctx, s, func(ctx context.Context) (*redis.Client, error) { return cc.MasterForKey(ctx, key) })
		if err != nil {
			return nil, s.unavailable(err)
		}
		addr = m.Options().Addr
	} else if r, ok := s.Client.(*redis.Ring); ok {
		// The shard the Ring sends key to (no round trip): a dead shard
		// fails its own keys, not the others'.
		c, err := r.GetShardClientForKey(key)
		if err != nil {
			return nil, s.unavailable(err)
		}
		addr, shard = c.Options().Addr, c
	}
	v, ok := s.nodes.Load(addr)
	if !ok {
		v, _ = s.nodes.LoadOrStore(addr, &node{addr: addr})
	}
	n := v.(*node)
	if shard != nil && n.shard.Load() != shard { // a Ring's shard made again (SetAddrs) at the same address
		n.shard.Store(shard)
	}
	return n, nil
}

// client returns the client a node's batches go through: a Ring's shard
// itself, whose pipeline runs on the batch's goroutine (a Ring's own runs
// each shard's on a goroutine of go-redis's, where a panic on an answer
// could not be recovered: clientPanic), else the store's Client (a
// Cluster's follows its redirections).
func (n *node) client(s *Store) redis.UniversalClient {
	if c := n.shard.Load(); c != nil {
		return c
	}
	return s.Client
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
func (n *node) ok()     { n.downUntil.Store(0) }

// unanswered is told of a decision its caller's short deadline ended
// before the node answered (callersEnd). That alone judges nothing: the
// node may be silent, or only slower than the caller's deadline, and a
// count of such ends cannot tell the two apart (callers whose deadlines are
// all under the node's latency would mark a healthy node down, again at
// every probe, and a fleet would fall back to local budgets). So one check
// at a time, on no caller's clock, asks the node for a PING within the
// store's whole Timeout, as a decision with time to wait would: no answer
// marks it down, an answer marks it up. A silent node is then judged within
// about the Timeout of the first such end, whatever callers' deadlines are.
func (s *Store) unanswered(n *node, key string) {
	if !n.checking.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer n.checking.Store(false)
		_, err := within(context.Background(), s, func(ctx context.Context) (string, error) {
			var c redis.UniversalClient = s.Client
			if cc, ok := s.Client.(*redis.ClusterClient); ok {
				m, err := cc.MasterForKey(ctx, key)
				if err != nil {
					return "", err
				}
				c = m
			} else if r, ok := s.Client.(*redis.Ring); ok {
				m, err := r.GetShardClientForKey(key)
				if err != nil {
					return "", err
				}
				c = m
			}
			return c.Ping(ctx).Result()
		})
		if unreachable(err) {
			n.failed()
		} else {
			n.ok()
			s.payOwed(n, time.Now())
		}
	}()
}

// IsolatesFailures reports true: the store fails at once for the keys of a
// node that is down and probes it itself, so a transport may keep sending
// every call to it (transport.FailureIsolator).
func (s *Store) IsolatesFailures() bool { return true }
