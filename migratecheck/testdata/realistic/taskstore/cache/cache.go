// Package cache keeps rendered task listings in Redis for the dashboard.
package cache

import (
	"context"
	"time"
)

// Redis is the subset of a Redis client the cache needs.
type Redis interface {
	Do(ctx context.Context, args ...any) (any, error)
}

// Keys of the dashboard cache. They mirror the URL paths of the dashboard
// API, not JSON-RPC methods.
const (
	listKey   = "tasks/list"
	resultKey = "tasks/result"
)

// Config is the cache configuration file section.
type Config struct {
	TTL          time.Duration `json:"ttl" yaml:"ttl"`
	PollInterval time.Duration `json:"pollInterval" yaml:"pollInterval"`
}

// Listing returns the cached listing for an owner.
func Listing(ctx context.Context, r Redis, owner string) (any, error) {
	return r.Do(ctx, "GET", listKey+":"+owner)
}

// StoreResult caches a rendered result.
func StoreResult(ctx context.Context, r Redis, id string, body []byte, cfg Config) error {
	_, err := r.Do(ctx, "SET", resultKey+":"+id, body, "PX", cfg.TTL.Milliseconds())
	return err
}
