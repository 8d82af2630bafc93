package router

import (
	"context"
	"errors"
	"fmt"

	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// The store's epoch (sessionmap/epoch.go) tells a bridge that its store was
// emptied or replaced under it. The Redis store reads it on its own every
// few seconds and behind every lookup that misses; readiness asks too.

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
		// Not err's text: it names the store's address, and /readyz answers
		// whoever asks. The ERROR log line has the details.
		return fmt.Errorf("the task store was lost or replaced since this bridge started (the ERROR log says how); "+
			"restart the bridge: %w", sessionmap.ErrStoreLost)
	default:
		return fmt.Errorf("store: %w", err)
	}
}
