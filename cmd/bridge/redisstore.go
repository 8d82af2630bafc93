package main

import (
	"context"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// --store selects where sessions and tasks live: empty (the default) is the
// embedded Badger store in --data-dir, one process; redis:// or rediss:// is
// a Redis shared by every replica of the bridge.

// storeFlags are the store flags of `bridge serve`; admin commands take
// --store and --redis-prefix (withWait false).
func storeFlags(withWait bool) []cli.Flag {
	fs := []cli.Flag{
		&cli.StringFlag{Name: "store", EnvVars: []string{"TASKSBRIDGE_STORE"},
			Usage: "keep sessions and tasks in the Redis at `URL` (redis://[USER:PASSWORD@]HOST:PORT/DB, rediss:// for TLS) " +
				"instead of --data-dir, so several bridges share them"},
		&cli.StringFlag{Name: "redis-prefix", Value: sessionmap.DefaultRedisPrefix, EnvVars: []string{"TASKSBRIDGE_REDIS_PREFIX"},
			Usage: "prefix of every Redis key; bridges with different prefixes can share one Redis database"},
	}
	if withWait {
		fs = append(fs,
			&cli.IntFlag{Name: "redis-wait-replicas", EnvVars: []string{"TASKSBRIDGE_REDIS_WAIT_REPLICAS"},
				Usage: "acknowledge a task or session only after `N` Redis replicas have it (Redis WAIT); 0: the primary alone"},
			&cli.DurationFlag{Name: "redis-wait-timeout", Value: sessionmap.DefaultRedisWaitTimeout, EnvVars: []string{"TASKSBRIDGE_REDIS_WAIT_TIMEOUT"},
				Usage: "how long a write waits for --redis-wait-replicas before it fails"},
		)
	}
	return fs
}

// openRedisStore opens the Redis of --store, or returns nil when --store is
// empty (Badger in --data-dir).
func openRedisStore(c *cli.Context, opts ...sessionmap.Option) (*sessionmap.Redis, error) {
	u := c.String("store")
	if u == "" {
		return nil, nil
	}
	if !sessionmap.IsRedisURL(u) {
		return nil, fmt.Errorf("--store: want redis://[USER:PASSWORD@]HOST:PORT/DB or rediss://...; " +
			"leave it empty for the store in --data-dir (the value given is not shown: it may hold a password)")
	}
	ctx, cancel := context.WithTimeout(c.Context, 30*time.Second)
	defer cancel()
	cfg := sessionmap.RedisConfig{URL: u, Prefix: c.String("redis-prefix")}
	if c.IsSet("redis-wait-replicas") || c.IsSet("redis-wait-timeout") {
		cfg.WaitReplicas, cfg.WaitTimeout = c.Int("redis-wait-replicas"), c.Duration("redis-wait-timeout")
	}
	return sessionmap.OpenRedis(ctx, cfg, opts...)
}

// storeName names the store in messages: the Redis address or the data dir.
func storeName(c *cli.Context) string {
	if u := c.String("store"); u != "" {
		return sessionmap.RedactURL(u) + " (prefix " + c.String("redis-prefix") + ")"
	}
	return c.String("data-dir")
}
