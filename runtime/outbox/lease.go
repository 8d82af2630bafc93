package outbox

import (
	"context"
	"sync"
	"time"

	"github.com/tasksbridge/tasksbridge/runtime/coord"
)

// DefaultLeaseTTL is Config.LeaseTTL's default. Its holder renews a lease
// every third of it for as long as the delivery runs (attempts and backoff
// waits alike), so a live holder keeps it through a Redis failover's
// 2–4 s write stall, and a holder that dies (kill -9) loses it within
// DefaultLeaseTTL: the replica that resumes the debt next (each replica
// reads what is owed when it starts) delivers it seconds later, not after
// the minutes the longest backoff would take.
const DefaultLeaseTTL = 10 * time.Second

// lease is one delivery's hold on its key's lease.
type lease struct {
	o           *Outbox
	name, token string

	mu   sync.Mutex
	held bool
	stop chan struct{} // closed to end the keeper; nil while none runs
	done chan struct{} // closed when the keeper returned
}

func (o *Outbox) newLease(name string) *lease {
	return &lease{o: o, name: name, token: coord.NewToken(o.cfg.Replica)}
}

// take makes sure this delivery holds the lease for one attempt: renewed if
// it was held, acquired otherwise. A lease newly held gets a keeper that
// renews it until release.
func (l *lease) take(ctx context.Context) (bool, error) {
	leases, ttl := l.o.cfg.Leases, l.o.cfg.LeaseTTL
	l.mu.Lock()
	held := l.held
	l.mu.Unlock()
	var ok bool
	var err error
	if held {
		ok, err = leases.Renew(ctx, l.name, l.token, ttl)
	}
	if !ok && err == nil {
		ok, err = leases.Acquire(ctx, l.name, l.token, ttl)
	}
	if err != nil {
		return false, err
	}
	l.mu.Lock()
	l.held = ok
	if ok && l.stop == nil {
		l.stop, l.done = make(chan struct{}), make(chan struct{})
		go l.keep(l.stop, l.done)
	}
	l.mu.Unlock()
	return ok, nil
}

// keep renews the lease every third of its period until stop, or until a
// renewal says it was lost (the next attempt then tries to take it again).
// A renewal that errs (Redis unreachable) is retried at the next tick: the
// lease expires by itself if the coordinator stays away.
func (l *lease) keep(stop, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(l.o.cfg.LeaseTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-l.o.ctx.Done():
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(l.o.ctx, l.o.cfg.LeaseTTL/3)
		ok, err := l.o.cfg.Leases.Renew(ctx, l.name, l.token, l.o.cfg.LeaseTTL)
		cancel()
		if err == nil && !ok {
			l.mu.Lock()
			l.held = false
			l.stop = nil
			l.mu.Unlock()
			return
		}
	}
}

// release stops the keeper and gives the lease up if this delivery holds
// it.
func (l *lease) release() {
	l.mu.Lock()
	stop, done, held := l.stop, l.done, l.held
	l.stop, l.held = nil, false
	l.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
	if held {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = l.o.cfg.Leases.Release(ctx, l.name, l.token)
	}
}
