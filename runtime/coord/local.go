package coord

import (
	"context"
	"sync"
	"time"
)

// Local is a Coordinator inside one process: leases in a map, fan-out over
// channels. Several consumers of one process share it as they would share a
// Redis.
type Local struct {
	now func() time.Time

	mu     sync.Mutex
	leases map[string]localLease
	subs   map[string]map[*localSub]struct{}
}

type localLease struct {
	holder  string
	expires time.Time
}

type localSub struct {
	ch   chan []byte
	done bool
}

var _ Coordinator = (*Local)(nil)

// NewLocal returns a Local whose leases expire by now (nil: time.Now).
func NewLocal(now func() time.Time) *Local {
	if now == nil {
		now = time.Now
	}
	return &Local{now: now, leases: map[string]localLease{}, subs: map[string]map[*localSub]struct{}{}}
}

// live returns name's lease if it has not expired (l.mu held).
func (l *Local) live(name string) (localLease, bool) {
	ls, ok := l.leases[name]
	if ok && !l.now().Before(ls.expires) {
		delete(l.leases, name)
		return localLease{}, false
	}
	return ls, ok
}

// Acquire implements Leases.
func (l *Local) Acquire(_ context.Context, name, holder string, ttl time.Duration) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.live(name); ok {
		return false, nil
	}
	l.leases[name] = localLease{holder: holder, expires: l.now().Add(ttl)}
	return true, nil
}

// Renew implements Leases.
func (l *Local) Renew(_ context.Context, name, holder string, ttl time.Duration) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ls, ok := l.live(name); !ok || ls.holder != holder {
		return false, nil
	}
	l.leases[name] = localLease{holder: holder, expires: l.now().Add(ttl)}
	return true, nil
}

// Release implements Leases.
func (l *Local) Release(_ context.Context, name, holder string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ls, ok := l.live(name); ok && ls.holder == holder {
		delete(l.leases, name)
	}
	return nil
}

// Holder implements Leases.
func (l *Local) Holder(_ context.Context, name string) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ls, _ := l.live(name)
	return ls.holder, nil
}

// Publish implements Fanout.
func (l *Local) Publish(_ context.Context, topic string, msg []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for s := range l.subs[topic] {
		select {
		case s.ch <- msg:
		default: // behind: dropped (at most once)
		}
	}
	return nil
}

// Subscribe implements Fanout.
func (l *Local) Subscribe(_ context.Context, topic string) (<-chan []byte, func(), error) {
	s := &localSub{ch: make(chan []byte, subBuffer)}
	l.mu.Lock()
	if l.subs[topic] == nil {
		l.subs[topic] = map[*localSub]struct{}{}
	}
	l.subs[topic][s] = struct{}{}
	l.mu.Unlock()
	return s.ch, func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if s.done {
			return
		}
		s.done = true
		delete(l.subs[topic], s)
		if len(l.subs[topic]) == 0 {
			delete(l.subs, topic)
		}
		close(s.ch)
	}, nil
}
