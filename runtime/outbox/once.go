package outbox

import (
	"context"
	"errors"
	"time"

	"github.com/tasksbridge/tasksbridge/runtime/coord"
)

// DefaultSentTTL is how long the "an attempt may have been sent" marker of
// an at-most-once delivery lasts (Config.SentTTL).
const DefaultSentTTL = 24 * time.Hour

// SendOnce makes one attempt of an at-most-once delivery. first is true
// only when no attempt of this key can have reached the upstream before
// (none here, and, with leases, no replica's: the sent marker was free);
// otherwise the attempt must first ask the upstream whether it still waits
// for the delivery, and settle without sending when it does not. done and
// err are as for Send.
type SendOnce func(ctx context.Context, first bool) (done bool, err error)

// errNoClaim: the coordinator could not confirm this replica's claim, so an
// at-most-once delivery makes no attempt this round.
var errNoClaim = errors.New("outbox: the delivery's claim cannot be confirmed; not sending")

// DeliverOnce is Deliver for a side effect the upstream must receive at most
// once per key (an input answer, M-30: a second tasks/update for a key the
// upstream has taken is a duplicate answer). Unlike Deliver:
//
//   - with Config.Leases, an attempt is made only while this replica holds
//     the key's claim (a lease, taken with a compare-and-set that, with
//     --redis-wait-replicas, is acknowledged only once replicated, so a
//     Redis failover does not hand it to a second replica while the first
//     still sends); an unreachable coordinator holds the attempt back
//     instead of letting it through;
//   - before its first attempt a delivery takes the key's sent marker
//     (the same compare-and-set, lasting Config.SentTTL): a marker already
//     taken says some attempt may have reached the upstream — another
//     replica's that died between sending and settling, or one whose answer
//     was lost — and send is told so (first false);
//   - fresh says the caller has just recorded the debt itself, so without
//     leases (one process) its first attempt is a first; a debt found in
//     the store after a restart (fresh false) never is.
func (o *Outbox) DeliverOnce(key, kind string, fresh bool, send SendOnce) bool {
	tried := false
	var sentToken string
	if o.cfg.Leases != nil {
		sentToken = coord.NewToken(o.cfg.Replica)
	}
	return o.deliverOnce(key, kind, func(ctx context.Context) (bool, error) {
		first := false
		if !tried {
			if o.cfg.Leases != nil {
				ok, err := o.cfg.Leases.Acquire(ctx, "outbox-sent:"+key, sentToken, o.cfg.SentTTL)
				if err != nil {
					return false, errNoClaim // tried stays false: the marker is asked again
				}
				first = ok
			} else {
				first = fresh
			}
		}
		tried = true
		return send(ctx, first)
	})
}

func (o *Outbox) deliverOnce(key, kind string, send Send) bool {
	if !o.admit(key, kind) {
		return false
	}
	release := func() {}
	if o.cfg.Leases != nil {
		// Strict: each attempt only while the coordinator confirms this
		// replica's claim; sending when it cannot tell could answer twice,
		// waiting costs one backoff.
		send, release = o.leased(key, send, true)
	}
	go func() {
		defer func() {
			release()
			o.settle(key, kind)
		}()
		o.run(kind, send, false)
	}()
	return true
}
