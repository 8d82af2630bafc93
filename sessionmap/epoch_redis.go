package sessionmap

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// epochReadTimeout bounds the epoch read behind a miss, so a "not found"
// never waits longer than this on a store that stopped answering.
const epochReadTimeout = 2 * time.Second

// CheckEpoch reads the store's epoch: nil while it is the one this bridge
// opened, an error wrapping ErrStoreLost once it is missing or another, and
// ErrUnavailable or another error when Redis cannot be read (not a loss).
func (r *Redis) CheckEpoch(ctx context.Context) error {
	if r.closed.Load() {
		return ErrClosed
	}
	if err := r.epoch.detail(); err != nil {
		return err
	}
	var cur string
	present := true
	err := r.retry(ctx, "read epoch", func(bool) (err error) {
		cur, err = r.rdb.Get(ctx, r.keys.epoch()).Result()
		if errors.Is(err, redis.Nil) {
			present, err = false, nil
		}
		return err
	})
	if err != nil {
		return r.fail(ctx, "read epoch", err)
	}
	return r.epoch.observe(ctx, cur, present)
}

// missOrLost is a miss (notFound, returned as it is) unless the store lost
// its epoch: then it is ErrStoreLost for the client. A failed epoch read
// leaves the miss a miss.
func (r *Redis) missOrLost(ctx context.Context, notFound error) error {
	if r.epoch == nil {
		return notFound
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), epochReadTimeout)
	defer cancel()
	cur, err := r.rdb.Get(cctx, r.keys.epoch()).Result()
	present := err == nil
	if err != nil && !errors.Is(err, redis.Nil) {
		return notFound
	}
	if r.epoch.observe(cctx, cur, present) != nil {
		return errLostForClients
	}
	return notFound
}

// redisEpochCheckInterval: how often a bridge reads the epoch on its own,
// so that a loss is logged (and the bridge stops writing into the new
// store) even when no lookup misses and nothing probes /readyz.
const redisEpochCheckInterval = 10 * time.Second

func (r *Redis) epochLoop(every time.Duration, stop <-chan struct{}) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), epochReadTimeout)
		err := r.CheckEpoch(ctx)
		cancel()
		if errors.Is(err, ErrStoreLost) {
			return // logged by CheckEpoch; nothing left to watch
		}
	}
}
