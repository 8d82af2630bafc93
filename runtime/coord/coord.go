// Package coord lets bridge replicas that share one store agree on who does a
// piece of work and tell each other what they saw: leases (one holder at a
// time, lost by a holder that stops renewing) and a fan-out of messages per
// topic. Redis implements both for replicas sharing a Redis; Local implements
// them in one process (for tests and for several consumers of one process).
//
// The consumers (runtime/watch: one upstream watcher per task across
// replicas) keep their own logic; this package only names holders and moves
// bytes.
package coord

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"
)

// Leases hands out named leases that expire. A holder names itself with a
// token of its own choosing (NewToken: unique per acquisition, so that a
// holder that lost its lease can never renew or release a later holder's).
type Leases interface {
	// Acquire takes name for holder for ttl when nobody holds it (or its
	// holder let it expire). It reports whether holder holds it now; false
	// with a nil error means someone else does.
	Acquire(ctx context.Context, name, holder string, ttl time.Duration) (bool, error)
	// Renew extends name by ttl from now if holder still holds it; false
	// with a nil error means the lease was lost (it expired and may have
	// been taken).
	Renew(ctx context.Context, name, holder string, ttl time.Duration) (bool, error)
	// Release gives name up if holder holds it (no-op otherwise).
	Release(ctx context.Context, name, holder string) error
	// Holder returns the token holding name, "" when nobody does.
	Holder(ctx context.Context, name string) (string, error)
}

// Fanout delivers messages published on a topic to every subscriber of that
// topic, in every process sharing the fan-out. Delivery is at most once:
// a subscriber that falls behind loses messages, and so does one whose
// connection broke; consumers must tolerate that (the watchers do: they
// re-ask and, at worst, take over).
type Fanout interface {
	Publish(ctx context.Context, topic string, msg []byte) error
	// Subscribe returns the messages published on topic after it returns,
	// until cancel is called (the channel is then closed). A nil message
	// says the subscription was re-established after a connection loss:
	// messages may have been missed.
	Subscribe(ctx context.Context, topic string) (msgs <-chan []byte, cancel func(), err error)
}

// Coordinator is both.
type Coordinator interface {
	Leases
	Fanout
}

// NewToken returns a fresh holder token (128 random bits, hex) prefixed by
// who, which names the replica in operator views (Holder).
func NewToken(who string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	if who == "" {
		return hex.EncodeToString(b[:])
	}
	return who + "/" + hex.EncodeToString(b[:])
}

// subBuffer is how many undelivered messages a subscriber may have before
// further ones are dropped (Fanout: at most once).
const subBuffer = 64
