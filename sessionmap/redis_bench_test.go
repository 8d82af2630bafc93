package sessionmap_test

import (
	"context"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/internal/testkit/redistest"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// Durable create on Redis, beside BenchmarkCreateTaskDurable (Badger): one
// client, loopback, a redis-server of the benchmark's own.
//
//	go test -run '^$' -bench 'CreateTaskDurable' -benchtime 2000x ./sessionmap/
//
// aof-always is the durability comparable to Badger's fsync (Redis fsyncs
// its append-only file before it answers); no-aof is Redis's memory only (a
// Redis restart loses everything since the last snapshot); wait1 adds
// --redis-wait-replicas 1 with one replica on the same host.
func BenchmarkCreateTaskDurableRedis(b *testing.B) {
	sc := sessionmap.Scope{Principal: sessionmap.PrincipalFromAuthorization("Bearer bench"), Session: "s"}
	aofAlways := []string{"--appendonly", "yes", "--appendfsync", "always"}
	for _, mode := range []struct {
		name    string
		args    []string
		replica bool
	}{
		{"aof-always", aofAlways, false},
		{"no-aof", nil, false},
		{"aof-always-wait1", aofAlways, true},
	} {
		b.Run(mode.name, func(b *testing.B) {
			srv := redistest.StartLocal(b, mode.args...)
			cfg := sessionmap.RedisConfig{URL: srv.URL, Prefix: "bench"}
			if mode.replica {
				redistest.StartReplica(b, srv)
				cfg.WaitReplicas = 1
			}
			s := openRedis(b, cfg)
			defer s.Close()
			ctx := context.Background()
			var lat latencies
			b.ResetTimer()
			for range b.N {
				t := benchTask(sc, time.Now())
				start := time.Now()
				if err := s.CreateTask(ctx, t); err != nil {
					b.Fatal(err)
				}
				lat.add(time.Since(start))
			}
			b.StopTimer()
			lat.report(b)
		})
	}
}
