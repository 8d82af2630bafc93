package cluster

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/internal/redistest"
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
