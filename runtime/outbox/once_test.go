package outbox

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/runtime/coord"
)

// waitIdle polls o until no delivery runs (deadline 10 s).
func waitIdle(t *testing.T, o *Outbox) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); o.Pending() != 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("delivery still running after 10s")
		}
	}
}

// An input answer one replica sent, whose settle never happened (the
// replica died, or the answer to its tasks/update was lost), is found owed
// by another replica: that one is told an attempt may have reached the
// upstream (first false), so it asks the upstream before sending, even when
// it thinks the debt fresh. On the old code the second replica sent blind:
// a duplicate answer upstream.
func TestOnceSecondReplicaIsToldAnAttemptMayHaveBeenSent(t *testing.T) {
	c := coord.NewLocal(nil)
	swA, swB := newStepWait(), newStepWait()
	a := New(Config{Wait: swA.wait, Leases: c, Replica: "a"})
	b := New(Config{Wait: swB.wait, Leases: c, Replica: "b"})
	defer b.Close()

	firsts := make(chan bool, 4)
	a.DeliverOnce("task\x00k", "tasks/update", true, func(_ context.Context, first bool) (bool, error) {
		firsts <- first
		return false, errors.New("the upstream's answer was lost")
	})
	if !<-firsts {
		t.Fatal("the very first attempt anywhere was not told it is the first")
	}
	<-swA.waits
	a.Close() // gives its claim up; the sent marker stays

	b.DeliverOnce("task\x00k", "tasks/update", true, func(_ context.Context, first bool) (bool, error) {
		firsts <- first
		return true, nil
	})
	waitIdle(t, b)
	if <-firsts {
		t.Fatal("a replica resuming a delivery another one attempted was told it is the first: it would send without asking the upstream")
	}
}

// One process (no leases): a debt it just recorded is a first attempt; one
// it found in the store after a restart, and every retry, is not.
func TestOnceWithoutLeases(t *testing.T) {
	sw := newStepWait()
	o := New(Config{Wait: sw.wait})
	defer o.Close()
	firsts := make(chan bool, 4)
	n := 0
	o.DeliverOnce("fresh", "tasks/update", true, func(_ context.Context, first bool) (bool, error) {
		firsts <- first
		if n++; n == 1 {
			return false, errors.New("unreachable")
		}
		return true, nil
	})
	<-sw.waits
	sw.release <- struct{}{}
	waitIdle(t, o)
	if f1, f2 := <-firsts, <-firsts; !f1 || f2 {
		t.Fatalf("first flags = %v, %v; want true then false (a retry may follow a sent attempt)", f1, f2)
	}
	o.DeliverOnce("resumed", "tasks/update", false, func(_ context.Context, first bool) (bool, error) {
		firsts <- first
		return true, nil
	})
	waitIdle(t, o)
	if <-firsts {
		t.Fatal("a debt found in the store after a restart was treated as never sent")
	}
}

// failingLeases is a coordinator in a failover: every call errs.
type failingLeases struct{ coord.Leases }

var errFailover = errors.New("redis: connection refused")

func (failingLeases) Acquire(context.Context, string, string, time.Duration) (bool, error) {
	return false, errFailover
}
func (failingLeases) Renew(context.Context, string, string, time.Duration) (bool, error) {
	return false, errFailover
}
func (failingLeases) Release(context.Context, string, string) error { return errFailover }

// While the coordinator cannot confirm the claim (a Redis failover), an
// at-most-once delivery makes no attempt: another replica may hold the
// claim and be sending. Deliver (a cancel: a second one is harmless) still
// goes through.
func TestOnceHoldsBackWhileTheClaimCannotBeConfirmed(t *testing.T) {
	sw := newStepWait()
	o := New(Config{Wait: sw.wait, Leases: failingLeases{}})
	defer o.Close()
	var mu sync.Mutex
	sent := 0
	o.DeliverOnce("k", "tasks/update", true, func(context.Context, bool) (bool, error) {
		mu.Lock()
		sent++
		mu.Unlock()
		return true, nil
	})
	<-sw.waits
	sw.release <- struct{}{}
	<-sw.waits
	mu.Lock()
	if sent != 0 {
		t.Errorf("an at-most-once delivery sent %d times without a confirmed claim", sent)
	}
	mu.Unlock()
	cancelled := make(chan struct{})
	o.Deliver("c", "tasks/cancel", func(context.Context) (bool, error) { close(cancelled); return true, nil })
	<-cancelled
}

// deadLeases is a replica's view of the coordinator after it died: its
// renewals and releases never arrive.
type deadLeases struct {
	coord.Leases
	dead atomic.Bool
}

func (d *deadLeases) Renew(ctx context.Context, name, holder string, ttl time.Duration) (bool, error) {
	if d.dead.Load() {
		return false, errFailover
	}
	return d.Leases.Renew(ctx, name, holder, ttl)
}

func (d *deadLeases) Release(ctx context.Context, name, holder string) error {
	if d.dead.Load() {
		return errFailover
	}
	return d.Leases.Release(ctx, name, holder)
}

// A replica dies (kill -9) while it holds a delivery's lease, in a backoff
// wait: once DefaultLeaseTTL has passed, the replica that resumed the same
// debt takes the lease and sends. On the old code the lease lasted twice
// the longest backoff (2 minutes), so a cancel owed by a killed replica
// reached the upstream minutes later (a chaos run's "wrong final status":
// the client saw cancelled, the upstream task still ran).
func TestDeadHoldersLeaseExpiresWithinTheDefault(t *testing.T) {
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	c := coord.NewLocal(clock)
	da := &deadLeases{Leases: c}
	swA, swB := newStepWait(), newStepWait()
	a := New(Config{Wait: swA.wait, Leases: da, Replica: "a"})
	defer a.Close()
	b := New(Config{Wait: swB.wait, Leases: c, Replica: "b"})
	defer b.Close()

	a.DeliverFirst("k", "tasks/cancel", func(context.Context) (bool, error) { return false, errors.New("unreachable") })
	<-swA.waits
	da.dead.Store(true) // A is gone: no renewal, no release

	sent := make(chan struct{})
	b.DeliverFirst("k", "tasks/cancel", func(context.Context) (bool, error) { close(sent); return true, nil })
	<-swB.waits // skipped: A's lease is live
	mu.Lock()
	now = now.Add(DefaultLeaseTTL + time.Second)
	mu.Unlock()
	swB.release <- struct{}{}
	select {
	case <-sent:
	case <-time.After(10 * time.Second):
		t.Fatal("the other replica never sent: the dead holder's lease outlived the default lease period")
	}
}
