package coord_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/internal/testkit/redistest"
	"github.com/tasksbridge/tasksbridge/runtime/coord"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

func TestMain(m *testing.M) {
	code := m.Run()
	redistest.StopShared()
	os.Exit(code)
}

func haCoord(t *testing.T, url string) *coord.Redis {
	t.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	st, err := sessionmap.OpenRedis(context.Background(), sessionmap.RedisConfig{URL: url, Prefix: "tbtest-" + hex.EncodeToString(b[:])})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	c := coord.NewRedis(st.Client(), st.Prefix(), slog.New(slog.DiscardHandler)).WithDurability(st.Durability())
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func expireBy(t *testing.T, c *coord.Redis) func(string) {
	return func(name string) {
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
			if h, err := c.Holder(context.Background(), name); err == nil && h == "" {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("lease %s did not expire within 10s", name)
	}
}

// Leases and the fan-out on a Sentinel-managed primary and on a Redis
// Cluster (one subscriber connection receives the topics of every slot).
func TestRedisHA(t *testing.T) {
	for name, url := range map[string]string{
		"Sentinel": redistest.SharedSentinel(t).URL,
		"Cluster":  redistest.SharedCluster(t).URL,
	} {
		t.Run(name, func(t *testing.T) {
			c := haCoord(t, url)
			conformance(t, c, 200*time.Millisecond, expireBy(t, c))
		})
	}
}

// Across a Sentinel failover a subscriber is told it was re-subscribed (a
// nil message) and receives what is published on the new primary. (Leases
// are not WAITed for: one lost in a failover is taken again by a replica's
// watcher within two lease periods.)
func TestRedisFanoutSurvivesFailover(t *testing.T) {
	sen := redistest.SharedSentinel(t)
	c := haCoord(t, sen.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	msgs, stop, err := c.Subscribe(ctx, "task-1")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if _, _, err := sen.Failover(ctx, 0); err != nil {
		t.Fatal(err)
	}
	sawNil := false
	deadline := time.After(30 * time.Second)
	for {
		// Publish until delivered: the re-subscription may lag the failover.
		err := c.Publish(ctx, "task-1", []byte("after"))
		select {
		case m := <-msgs:
			if m == nil {
				sawNil = true
				continue
			}
			if string(m) != "after" {
				t.Fatalf("got %q", m)
			}
			if !sawNil {
				t.Fatal("no nil message told the subscriber it was re-subscribed")
			}
			return
		case <-time.After(200 * time.Millisecond):
		case <-deadline:
			t.Fatalf("nothing delivered after the failover (last publish: %v)", err)
		}
	}
}

// With the store's --redis-wait-replicas, a lease no replica acknowledged
// is not taken (and not left behind); with a replica it is.
func TestRedisLeaseWaitsForReplicas(t *testing.T) {
	primary := redistest.StartLocal(t)
	ctx := context.Background()
	c := haCoord(t, primary.URL).WithDurability(1, 100*time.Millisecond, 300*time.Millisecond)
	tok := coord.NewToken("r1")
	if ok, err := c.Acquire(ctx, "l", tok, time.Minute); ok || err != nil {
		t.Fatalf("Acquire without a replica = %v, %v; want false, nil", ok, err)
	}
	if h, err := c.Holder(ctx, "l"); h != "" || err != nil {
		t.Fatalf("a lease no replica has is left held by %q (%v)", h, err)
	}
	redistest.StartReplica(t, primary)
	c.WithDurability(1, 10*time.Second, 0)
	if ok, err := c.Acquire(ctx, "l", tok, time.Minute); !ok || err != nil {
		t.Fatalf("Acquire with a replica = %v, %v", ok, err)
	}
	if ok, err := c.Renew(ctx, "l", tok, time.Minute); !ok || err != nil {
		t.Fatalf("Renew with a replica = %v, %v", ok, err)
	}
}
