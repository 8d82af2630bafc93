package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/internal/testkit/redistest"
	"github.com/tasksbridge/tasksbridge/interop/peers"
)

// The Sentinel and Cluster setups are started once for this package's
// tests and stopped here.
func TestMain(m *testing.M) {
	code := m.Run()
	redistest.StopShared()
	os.Exit(code)
}

func haPrefix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "tbe2e-" + hex.EncodeToString(b[:])
}

// The 3-replica end-to-end on the high-availability topologies: the same
// TypeScript SDK legacy flow as TestThreeReplicasTSLegacyFlow, with the
// input round trips of TestThreeReplicasTSInput, through the round-robin
// proxy, the replicas' store being a Sentinel-managed primary (1 primary,
// 1 replica, 3 sentinels, --redis-wait-replicas 1) or a 3-primary Redis
// Cluster (every task's keys in its own slots, leases spread over nodes).
func TestThreeReplicasTSOnSentinelAndCluster(t *testing.T) {
	for _, tc := range []struct {
		name string
		url  func(*testing.T) string
		args []string
	}{
		{"Sentinel", func(t *testing.T) string { return redistest.SharedSentinel(t).URL }, []string{"--redis-wait-replicas", "1"}},
		{"Cluster", func(t *testing.T) string { return redistest.SharedCluster(t).URL }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := startClusterOn(t, tc.url(t), haPrefix(), tc.args...)
			rep := peers.RunTSClient(t, c.URL, peers.ClientOptions{
				Steps:   []string{"init", "list", "task", "stream", "plain", "tasklist", "cancel", "fail", "iserror", "elicit", "sample"},
				Args:    tsArgs,
				Timeout: 60 * time.Second,
			})
			rep.Require(t)
			up := c.Upstream.Counters()
			if up.InputResponses != 2 || up.DuplicateKeys != 0 || up.UnknownKeys != 0 {
				t.Errorf("upstream input answers: accepted %d, duplicates %d, unknown %d; want 2, 0, 0",
					up.InputResponses, up.DuplicateKeys, up.UnknownKeys)
			}
			requireSpread(t, c)
		})
	}
}

// A Redis Cluster node killed with SIGKILL and restarted on its AOF, then
// slots moved with redis-cli --cluster reshard (MOVED and ASK while the
// keys migrate), while the TypeScript SDK legacy client runs its whole
// flow through the three replicas: every step passes, nothing is lost.
func TestThreeReplicasTSClusterRestartAndReshard(t *testing.T) {
	rc := redistest.SharedCluster(t)
	c := startClusterOn(t, rc.URL, haPrefix())
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	chaos := make(chan error, 1)
	var chaosDone time.Time
	go func() {
		// Let the client start, then disturb the slot owners.
		select {
		case <-time.After(time.Second):
		case <-ctx.Done():
			chaos <- ctx.Err()
			return
		}
		rc.Nodes[1].Kill()
		err := rc.Nodes[1].Restart()
		if err == nil {
			err = rc.WaitOK(30 * time.Second)
		}
		if err == nil {
			err = rc.Reshard(ctx, 2, 0, 300)
		}
		chaosDone = time.Now()
		chaos <- err
	}()
	// The flow twice, so that it still runs when the resharding ends.
	for range 2 {
		rep := peers.RunTSClient(t, c.URL, peers.ClientOptions{
			Steps:   []string{"init", "list", "task", "stream", "plain", "tasklist", "cancel", "fail", "iserror", "elicit", "sample"},
			Args:    tsArgs,
			Timeout: 75 * time.Second,
		})
		rep.Require(t)
	}
	clientsDone := time.Now()
	if err := <-chaos; err != nil {
		t.Fatalf("restart and reshard: %v", err)
	}
	if chaosDone.After(clientsDone) {
		t.Fatalf("the resharding ended %s after the clients: it did not happen while they ran", chaosDone.Sub(clientsDone))
	}
	if up := c.Upstream.Counters(); up.DuplicateKeys != 0 || up.InputResponses != 4 {
		t.Errorf("upstream input answers: %d accepted, %d duplicates; want 4, 0", up.InputResponses, up.DuplicateKeys)
	}
}
