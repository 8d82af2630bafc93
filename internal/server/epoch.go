package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// The store's epoch (sessionmap/epoch.go) tells a bridge that its store was
// emptied or replaced under it. These are the server's two uses of it; the
// readiness check and the serve loop call them.

// storeEpochReady is the readiness part of the epoch check: nil while the
// store is the one the bridge opened; a plain reason once it was lost (the
// bridge then stays not ready until it is restarted: a load balancer sends
// its clients to replicas that know the store as it is now). A store that
// cannot be read right now is reported as such, not as lost.
func storeEpochReady(ctx context.Context, st sessionmap.Store) error {
	err := st.CheckEpoch(ctx)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, sessionmap.ErrStoreLost):
		return fmt.Errorf("the task store was lost or replaced since this bridge started (see the ERROR log); "+
			"restart the bridge: %w", err)
	default:
		return fmt.Errorf("store: %w", err)
	}
}

// DefaultEpochCheckInterval is how often watchStoreEpoch reads the epoch.
const DefaultEpochCheckInterval = 15 * time.Second

// watchStoreEpoch reads the store's epoch every interval until ctx ends,
// so that a loss is logged (at ERROR, once, by the store) even when no
// client names a lost task and nothing probes /readyz. It returns when the
// loss is seen: nothing is left to watch.
func watchStoreEpoch(ctx context.Context, st sessionmap.Store, interval time.Duration, log *slog.Logger) {
	if interval <= 0 {
		interval = DefaultEpochCheckInterval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		err := st.CheckEpoch(ctx)
		if errors.Is(err, sessionmap.ErrStoreLost) {
			return
		}
		if err != nil && ctx.Err() == nil {
			log.Debug("cannot read the task store's epoch", "err", err)
		}
	}
}
