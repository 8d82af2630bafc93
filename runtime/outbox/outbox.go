// Package outbox delivers the side effects the bridge owes an upstream (a
// tasks/cancel after a legacy client cancelled, or after the bridge failed a
// task itself; a tasks/update with a legacy client's input answer) until the
// upstream acknowledges them or they stop mattering.
//
// The outbox is the in-process half: it retries one delivery per key with
// exponential backoff and counts what is pending and how often it retried.
// Durability is the caller's: the debt is recorded in the session store
// before Deliver is called and cleared when the delivery settles, so a
// restarted bridge finds it and calls Deliver again (L-57: try to stop the
// execution; L-59: the local cancelled state never depends on it; M-28:
// fulfil the input requests).
package outbox

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/tasksbridge/tasksbridge/runtime/coord"
)

// Defaults of Config.
const (
	DefaultInitial = time.Second
	DefaultMax     = time.Minute
)

// Config configures New. The zero value gives the defaults.
type Config struct {
	// Initial is the first retry delay; it doubles up to Max.
	Initial, Max time.Duration
	// Wait blocks for d or until ctx ends (tests inject one to drive retries
	// without sleeping). Default: a timer.
	Wait func(ctx context.Context, d time.Duration) error
	// Pending is called with +1 when a delivery starts and -1 when it ends
	// (metrics; must not block).
	Pending func(kind string, delta int)
	// Retry is called before each retry of a failed attempt (metrics).
	Retry func(kind string)

	// Leases, when set (replicas sharing a Redis), let only the replica
	// holding a key's lease make an attempt: the others skip theirs and
	// look again after their backoff, so each retry is sent by one replica.
	// A holder keeps the lease until the delivery ends, and loses it when it
	// dies and stops renewing. Nil: every attempt is made.
	Leases coord.Leases
	// LeaseTTL is how long a lease lasts without renewal; its holder
	// renews it every third of that while the delivery runs. Default
	// DefaultLeaseTTL.
	LeaseTTL time.Duration
	// Replica names this process in lease holders (operator views).
	Replica string
	// SentTTL is how long the sent marker of an at-most-once delivery
	// (DeliverOnce) lasts. Default DefaultSentTTL.
	SentTTL time.Duration
}

// Send makes one attempt. done is true when nothing is owed any more (the
// upstream acknowledged, or the debt no longer matters); otherwise err says
// why the attempt failed and the outbox retries after a backoff.
type Send func(ctx context.Context) (done bool, err error)

// Outbox runs deliveries in the background. Close stops them; what was not
// delivered stays recorded wherever the caller keeps it.
type Outbox struct {
	cfg    Config
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex
	active map[string]bool
	closed bool
}

// New returns a running Outbox.
func New(cfg Config) *Outbox {
	if cfg.Initial <= 0 {
		cfg.Initial = DefaultInitial
	}
	if cfg.Max < cfg.Initial {
		cfg.Max = max(DefaultMax, cfg.Initial)
	}
	if cfg.Wait == nil {
		cfg.Wait = timerWait
	}
	if cfg.LeaseTTL <= 0 {
		cfg.LeaseTTL = DefaultLeaseTTL
	}
	if cfg.SentTTL <= 0 {
		cfg.SentTTL = DefaultSentTTL
	}
	o := &Outbox{cfg: cfg, active: map[string]bool{}}
	o.ctx, o.cancel = context.WithCancel(context.Background())
	return o
}

func timerWait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Deliver starts delivering key (of kind, a metric label such as
// "tasks/cancel") with send, in the background, unless a delivery of key is
// already running or the outbox is closed. It reports whether it started
// one.
func (o *Outbox) Deliver(key, kind string, send Send) bool {
	return o.deliver(key, kind, send, false)
}

// DeliverFirst is Deliver with the first attempt made before it returns,
// in the caller's goroutine (so that a reachable upstream has seen it when
// the caller answers its client); only the retries run in the background.
func (o *Outbox) DeliverFirst(key, kind string, send Send) bool {
	return o.deliver(key, kind, send, true)
}

// admit marks key as being delivered (false: it already is, or the
// outbox is closed) and counts it as pending.
func (o *Outbox) admit(key, kind string) bool {
	o.mu.Lock()
	if o.closed || o.active[key] {
		o.mu.Unlock()
		return false
	}
	o.active[key] = true
	o.wg.Add(1)
	o.mu.Unlock()
	if o.cfg.Pending != nil {
		o.cfg.Pending(kind, 1)
	}
	return true
}

// settle undoes admit once key's delivery has ended.
func (o *Outbox) settle(key, kind string) {
	o.mu.Lock()
	delete(o.active, key)
	o.mu.Unlock()
	if o.cfg.Pending != nil {
		o.cfg.Pending(kind, -1)
	}
	o.wg.Done()
}

func (o *Outbox) deliver(key, kind string, send Send, inline bool) bool {
	if !o.admit(key, kind) {
		return false
	}
	release := func() {}
	if o.cfg.Leases != nil {
		send, release = o.leased(key, send, false)
	}
	finish := func() {
		release()
		o.settle(key, kind)
	}
	if inline {
		if done, _ := send(o.ctx); done || o.ctx.Err() != nil {
			finish()
			return true
		}
	}
	go func() {
		defer finish()
		o.run(kind, send, inline)
	}()
	return true
}

// leased wraps send so that an attempt is made only while this replica
// holds key's lease (kept renewed while the delivery runs); release gives
// it up. When the coordinator cannot say who holds it, strict holds the
// attempt back (errNoClaim: a delivery that must happen once, where a
// holder whose renewal failed may have lost the lease to a replica that
// sends now); otherwise the attempt is made: a duplicate is harmless (the
// upstream ignores a second cancel), a missing one is not.
func (o *Outbox) leased(key string, send Send, strict bool) (Send, func()) {
	l := o.newLease("outbox:" + key)
	return func(ctx context.Context) (bool, error) {
		ok, err := l.take(ctx)
		switch {
		case err != nil && strict:
			return false, errNoClaim
		case !ok && err == nil:
			return false, errHeldElsewhere
		}
		return send(ctx)
	}, l.release
}

// errHeldElsewhere: another replica holds the delivery's lease.
var errHeldElsewhere = errors.New("outbox: another replica is delivering this")

// run makes attempts until one is done; tried says the first attempt was
// already made.
func (o *Outbox) run(kind string, send Send, tried bool) {
	delay := o.cfg.Initial
	for {
		if !tried {
			if done, _ := send(o.ctx); done || o.ctx.Err() != nil {
				return
			}
		}
		tried = false
		if o.cfg.Wait(o.ctx, delay) != nil {
			return
		}
		if o.cfg.Retry != nil {
			o.cfg.Retry(kind)
		}
		delay = min(delay*2, o.cfg.Max)
	}
}

// Pending returns the number of deliveries running.
func (o *Outbox) Pending() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.active)
}

// Close stops every delivery (their next wait or attempt sees a cancelled
// context) and waits for them to return.
func (o *Outbox) Close() {
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
	o.cancel()
	o.wg.Wait()
}
