package redistest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestMain(m *testing.M) {
	code := m.Run()
	StopShared()
	os.Exit(code)
}

// The Sentinel setup fails over: a key written (and replicated, WAIT 1)
// before the primary is killed is read from the promoted replica, and the
// old primary comes back as a replica.
func TestSentinelFailover(t *testing.T) {
	s := SharedSentinel(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	addrs := []string{}
	for _, n := range s.Sentinels {
		addrs = append(addrs, n.Addr)
	}
	c := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: s.MasterName, SentinelAddrs: addrs})
	defer c.Close()
	if err := c.Set(ctx, "redistest:k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	conn := c.Conn()
	if err := conn.Set(ctx, "redistest:k2", "v2", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := conn.Wait(ctx, 1, 5*time.Second).Result(); err != nil || n != 1 {
		t.Fatalf("WAIT 1 = %d, %v", n, err)
	}
	_ = conn.Close()
	before, _ := s.PrimaryAddr(ctx)
	_, took, err := s.Failover(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := s.PrimaryAddr(ctx)
	if after == before {
		t.Fatalf("primary still %s", after)
	}
	t.Logf("failover took %s", took)
	deadline := time.Now().Add(30 * time.Second)
	for {
		v, err := c.Get(ctx, "redistest:k2").Result()
		if err == nil && v == "v2" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after failover: %q, %v", v, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// The cluster serves keys of every slot and survives a node restart with
// its data (AOF).
func TestClusterRestart(t *testing.T) {
	cl := SharedCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var addrs []string
	for _, n := range cl.Nodes {
		addrs = append(addrs, n.Addr)
	}
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	defer c.Close()
	for i := range 50 {
		if err := c.Set(ctx, "redistest:"+string(rune('a'+i%26))+string(rune('a'+i/26)), i, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	cl.Nodes[1].Kill()
	if err := cl.Nodes[1].Restart(); err != nil {
		t.Fatal(err)
	}

	if err := cl.WaitOK(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		k := "redistest:" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		deadline := time.Now().Add(20 * time.Second)
		for {
			n, err := c.Get(ctx, k).Int()
			if err == nil && n == i {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s = %d, %v after restart", k, n, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	if err := cl.Reshard(ctx, 0, 2, 20); err != nil {
		t.Fatal(err)
	}
}
