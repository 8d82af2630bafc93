package sessionmap

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/tasksbridge/tasksbridge/internal/testkit/redistest"
)

// A connection to a replica (a sentinel that has not learnt of a failover
// yet names the old primary, back as a syncing replica) is refused with a
// READONLY error the store retries; one to the primary is accepted.
func TestRequirePrimary(t *testing.T) {
	primary := redistest.StartLocal(t)
	replica := redistest.StartReplica(t, primary)
	ctx := context.Background()
	for _, tc := range []struct {
		srv     *redistest.Server
		refused bool
	}{{primary, false}, {replica, true}} {
		c := redis.NewClient(&redis.Options{Addr: tc.srv.Addr, OnConnect: requirePrimary, MaxRetries: -1})
		err := c.Ping(ctx).Err()
		_ = c.Close()
		if tc.refused != (err != nil) || tc.refused && (!strings.Contains(err.Error(), "READONLY") || !transient(err)) {
			t.Errorf("%s (replica %v): %v", tc.srv.Addr, tc.refused, err)
		}
	}
}
