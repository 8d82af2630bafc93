package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// --store selects where sessions and tasks live: empty (the default) is the
// embedded Badger store in --data-dir, one process; a Redis URL is a Redis
// shared by every replica of the bridge: one server (redis://, rediss://),
// a Sentinel-managed primary (redis+sentinel://) or a Redis Cluster
// (redis+cluster://). Passwords come from the URL, TASKSBRIDGE_REDIS_PASSWORD
// or --redis-password-file, and are never logged.

// storeFlags are the store flags of `bridge serve`; admin commands take
// --store, --redis-prefix and the connection flags (withWait false).
func storeFlags(withWait bool) []cli.Flag {
	fs := []cli.Flag{
		&cli.StringFlag{Name: "store", EnvVars: []string{"TASKSBRIDGE_STORE"},
			Usage: "keep sessions and tasks in the Redis at `URL` instead of --data-dir, so several bridges share them: " +
				"redis://[USER@]HOST:PORT/DB (one server), redis+sentinel://[USER@]HOST:PORT,HOST:PORT/MASTER/DB " +
				"(Redis Sentinel) or redis+cluster://[USER@]HOST:PORT,HOST:PORT (Redis Cluster); rediss… for TLS. " +
				"Give the password with --redis-password-file or TASKSBRIDGE_REDIS_PASSWORD: a password in this URL " +
				"(USER:PASSWORD@) works but shows in ps when passed on the command line"},
		&cli.StringFlag{Name: "redis-prefix", Value: sessionmap.DefaultRedisPrefix, EnvVars: []string{"TASKSBRIDGE_REDIS_PREFIX"},
			Usage: "prefix of every Redis key; bridges with different prefixes can share one Redis database"},
		&cli.StringFlag{Name: "redis-password-file", EnvVars: []string{"TASKSBRIDGE_REDIS_PASSWORD_FILE"},
			Usage: "read the Redis password from `FILE` (first line), the way to give it (or TASKSBRIDGE_REDIS_PASSWORD); " +
				"it wins over a password in --store, which would show in ps"},
		&cli.StringFlag{Name: "redis-sentinel-password-file", EnvVars: []string{"TASKSBRIDGE_REDIS_SENTINEL_PASSWORD_FILE"},
			Usage: "read the sentinels' own password from `FILE` when they have one (with --redis-sentinel-user for an ACL user)"},
		&cli.StringFlag{Name: "redis-sentinel-user", EnvVars: []string{"TASKSBRIDGE_REDIS_SENTINEL_USER"},
			Usage: "ACL user of the sentinels, when they have their own"},
		&cli.StringFlag{Name: "redis-ca", EnvVars: []string{"TASKSBRIDGE_REDIS_CA"},
			Usage: "verify the Redis servers' TLS certificates with the CA certificates in `FILE` (PEM) instead of the system's"},
		&cli.StringFlag{Name: "redis-cert", EnvVars: []string{"TASKSBRIDGE_REDIS_CERT"},
			Usage: "client certificate `FILE` (PEM) for Redis servers that require one (with --redis-key)"},
		&cli.StringFlag{Name: "redis-key", EnvVars: []string{"TASKSBRIDGE_REDIS_KEY"},
			Usage: "private key `FILE` (PEM) of --redis-cert"},
		&cli.StringFlag{Name: "redis-tls-server-name", EnvVars: []string{"TASKSBRIDGE_REDIS_TLS_SERVER_NAME"},
			Usage: "the `NAME` the Redis servers' certificates must carry, when it is not the address dialled"},
	}
	if withWait {
		fs = append(fs,
			&cli.IntFlag{Name: "redis-wait-replicas", EnvVars: []string{"TASKSBRIDGE_REDIS_WAIT_REPLICAS"},
				Usage: "acknowledge a task or session only after `N` Redis replicas have it (Redis WAIT), so a primary's " +
					"failover loses no acknowledged task; 0: the primary alone"},
			&cli.DurationFlag{Name: "redis-wait-timeout", Value: sessionmap.DefaultRedisWaitTimeout, EnvVars: []string{"TASKSBRIDGE_REDIS_WAIT_TIMEOUT"},
				Usage: "how long one WAIT for --redis-wait-replicas lasts (it is retried until --redis-failover-timeout)"},
			&cli.DurationFlag{Name: "redis-failover-timeout", EnvVars: []string{"TASKSBRIDGE_REDIS_FAILOVER_TIMEOUT"},
				Usage: "how long a store operation keeps retrying while Redis is unreachable or has no writable primary " +
					"(a failover, a restart) before the client gets a retriable error; default 15s with Sentinel or Cluster, " +
					"no retry with one server (negative: never retry)"},
		)
	}
	return fs
}

// readSecretFile returns the first line of a password file.
func readSecretFile(flag, path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("--%s: %w", flag, err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	line = strings.TrimRight(line, "\r")
	if line == "" {
		return "", fmt.Errorf("--%s: %s is empty", flag, path)
	}
	return line, nil
}

// openRedisStore opens the Redis of --store, or returns nil when --store is
// empty (Badger in --data-dir).
func openRedisStore(c *cli.Context, opts ...sessionmap.Option) (*sessionmap.Redis, error) {
	u := c.String("store")
	if u == "" {
		return nil, nil
	}
	if !sessionmap.IsRedisURL(u) {
		return nil, fmt.Errorf("--store: want redis://[USER:PASSWORD@]HOST:PORT/DB, redis+sentinel://HOST:PORT,HOST:PORT/MASTER/DB " +
			"or redis+cluster://HOST:PORT,HOST:PORT (rediss… for TLS); leave it empty for the store in --data-dir " +
			"(the value given is not shown: it may hold a password)")
	}
	ctx, cancel := context.WithTimeout(c.Context, 30*time.Second)
	defer cancel()
	cfg := sessionmap.RedisConfig{URL: u, Prefix: c.String("redis-prefix"),
		CAFile: c.String("redis-ca"), CertFile: c.String("redis-cert"), KeyFile: c.String("redis-key"),
		TLSServerName: c.String("redis-tls-server-name"), SentinelUser: c.String("redis-sentinel-user"),
		Password: os.Getenv("TASKSBRIDGE_REDIS_PASSWORD")}
	if f := c.String("redis-password-file"); f != "" {
		pw, err := readSecretFile("redis-password-file", f)
		if err != nil {
			return nil, err
		}
		cfg.Password = pw
	}
	cfg.SentinelPassword = os.Getenv("TASKSBRIDGE_REDIS_SENTINEL_PASSWORD")
	if f := c.String("redis-sentinel-password-file"); f != "" {
		pw, err := readSecretFile("redis-sentinel-password-file", f)
		if err != nil {
			return nil, err
		}
		cfg.SentinelPassword = pw
	}
	if c.IsSet("redis-wait-replicas") || c.IsSet("redis-wait-timeout") {
		cfg.WaitReplicas, cfg.WaitTimeout = c.Int("redis-wait-replicas"), c.Duration("redis-wait-timeout")
	}
	if c.IsSet("redis-failover-timeout") {
		cfg.FailoverTimeout = c.Duration("redis-failover-timeout")
	}
	return sessionmap.OpenRedis(ctx, cfg, opts...)
}

// storeName names the store in messages: the Redis topology or the data dir.
func storeName(c *cli.Context) string {
	if u := c.String("store"); u != "" {
		return sessionmap.RedactURL(u) + " (prefix " + c.String("redis-prefix") + ")"
	}
	return c.String("data-dir")
}
