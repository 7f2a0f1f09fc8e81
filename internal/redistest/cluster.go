package redistest

import (
	"context"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Cluster is a running Redis Cluster of masters without replicas.
type Cluster struct {
	Masters []*Server
	tb      testing.TB
}

// StartCluster starts n cluster-enabled redis-servers on free loopback
// ports, joins them into one cluster with redis-cli --cluster create, and
// waits until every node reports cluster_state:ok. A cluster of one (which
// redis-cli --cluster create refuses) is made with CLUSTER ADDSLOTSRANGE: a
// node that holds every slot, yet refuses commands whose keys cross slots.
// It skips like Start when redis-server or redis-cli is missing. Nodes
// serve their own slots while another is down (cluster-require-full-coverage
// no, as a cluster without replicas meant to outlive a master is set up):
// with the default, every node refuses every command (CLUSTERDOWN) once the
// others have declared a dead master failed, 2 s (cluster-node-timeout)
// after it died, so a test of a dead master would see the healthy ones
// answer for a time set by failure detection, not by the test.
func StartCluster(tb testing.TB, n int) *Cluster {
	tb.Helper()
	if _, err := exec.LookPath("redis-cli"); err != nil {
		Start(tb) // skips, or fails under FGRL_REQUIRE_REDIS, when redis-server is missing
		tb.Fatal("redis-cli not on PATH (it comes with redis-server's package)")
	}
	dir := tb.TempDir()
	c := &Cluster{tb: tb}
	addrs := make([]string, n)
	for i := range n {
		s := Start(tb, "--cluster-enabled", "yes", "--cluster-node-timeout", "2000", "--cluster-require-full-coverage", "no",
			"--cluster-config-file", filepath.Join(dir, "nodes-"+strconv.Itoa(i)+".conf"))
		c.Masters = append(c.Masters, s)
		addrs[i] = s.Addr
	}
	if n == 1 {
		if err := c.Masters[0].Client().Do(context.Background(), "CLUSTER", "ADDSLOTSRANGE", 0, 16383).Err(); err != nil {
			tb.Fatalf("CLUSTER ADDSLOTSRANGE: %v", err)
		}
		c.WaitOK()
		return c
	}
	args := append([]string{"--cluster", "create"}, addrs...)
	out, err := exec.Command("redis-cli", append(args, "--cluster-replicas", "0", "--cluster-yes")...).CombinedOutput()
	if err != nil {
		tb.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	c.WaitOK()
	return c
}

// WaitOK waits until every live node says cluster_state:ok.
func (c *Cluster) WaitOK() {
	c.tb.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for _, s := range c.Masters {
		if s.cmd == nil {
			continue
		}
		rc := redis.NewClient(&redis.Options{Addr: s.Addr})
		for {
			info, _ := rc.ClusterInfo(context.Background()).Result()
			if strings.Contains(info, "cluster_state:ok") {
				break
			}
			if time.Now().After(deadline) {
				rc.Close()
				c.tb.Fatalf("cluster not ok after 20 s: %s", info)
			}
			time.Sleep(50 * time.Millisecond)
		}
		rc.Close()
	}
}

// Client returns a cluster client with short timeouts, closed when the test
// ends.
func (c *Cluster) Client() *redis.ClusterClient {
	addrs := make([]string, len(c.Masters))
	for i, s := range c.Masters {
		addrs[i] = s.Addr
	}
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, DialTimeout: 250 * time.Millisecond,
		ReadTimeout: time.Second, WriteTimeout: time.Second, MaxRedirects: 2})
	c.tb.Cleanup(func() { cc.Close() })
	return cc
}
