package outbox

import (
	"context"
	"errors"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/runtime/coord"
)

// stepWait is an injected Wait: each wait reports its delay on waits and
// returns when the test releases it (no wall-clock sleeps).
type stepWait struct {
	waits   chan time.Duration
	release chan struct{}
}

func newStepWait() *stepWait {
	return &stepWait{waits: make(chan time.Duration, 16), release: make(chan struct{})}
}

func (s *stepWait) wait(ctx context.Context, d time.Duration) error {
	s.waits <- d
	select {
	case <-s.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// A delivery that fails three times is retried with doubling, capped
// backoff until it succeeds; the pending gauge goes up and back down and
// every retry is counted.
func TestRetriesWithBackoffUntilDone(t *testing.T) {
	sw := newStepWait()
	var mu sync.Mutex
	pending, retries := 0, 0
	o := New(Config{Initial: time.Second, Max: 3 * time.Second, Wait: sw.wait,
		Pending: func(kind string, d int) { mu.Lock(); pending += d; mu.Unlock() },
		Retry:   func(string) { mu.Lock(); retries++; mu.Unlock() }})
	defer o.Close()
	attempts := 0
	done := make(chan struct{})
	if !o.Deliver("k", "tasks/cancel", func(context.Context) (bool, error) {
		attempts++
		if attempts <= 3 {
			return false, errors.New("upstream unreachable")
		}
		close(done)
		return true, nil
	}) {
		t.Fatal("Deliver refused")
	}
	if o.Deliver("k", "tasks/cancel", func(context.Context) (bool, error) { return true, nil }) {
		t.Error("a second delivery of the same key started")
	}
	for _, want := range []time.Duration{time.Second, 2 * time.Second, 3 * time.Second} {
		if got := <-sw.waits; got != want {
			t.Errorf("backoff = %v, want %v", got, want)
		}
		sw.release <- struct{}{}
	}
	<-done
	o.Close()
	mu.Lock()
	defer mu.Unlock()
	if attempts != 4 || retries != 3 || pending != 0 {
		t.Errorf("attempts %d retries %d pending %d, want 4, 3, 0", attempts, retries, pending)
	}
	if o.Pending() != 0 {
		t.Errorf("Pending() = %d after completion", o.Pending())
	}
}

// Close stops a delivery that is waiting to retry and refuses new ones.
func TestCloseStopsDeliveries(t *testing.T) {
	sw := newStepWait()
	o := New(Config{Wait: sw.wait})
	o.Deliver("k", "tasks/cancel", func(context.Context) (bool, error) { return false, errors.New("down") })
	<-sw.waits
	if o.Pending() != 1 {
		t.Errorf("Pending() = %d, want 1", o.Pending())
	}
	o.Close()
	if o.Pending() != 0 {
		t.Errorf("Pending() = %d after Close", o.Pending())
	}
	if o.Deliver("k2", "tasks/cancel", func(context.Context) (bool, error) { return true, nil }) {
		t.Error("Deliver after Close started a delivery")
	}
}

// DeliverFirst makes the first attempt before it returns; a failed one is
// retried in the background like Deliver's.
func TestDeliverFirstTriesInline(t *testing.T) {
	sw := newStepWait()
	o := New(Config{Wait: sw.wait})
	defer o.Close()
	attempts := 0
	o.DeliverFirst("ok", "tasks/cancel", func(context.Context) (bool, error) { attempts++; return true, nil })
	if attempts != 1 || o.Pending() != 0 {
		t.Fatalf("after DeliverFirst: attempts %d pending %d, want 1 and 0", attempts, o.Pending())
	}
	var mu sync.Mutex
	tries := 0
	done := make(chan struct{})
	o.DeliverFirst("retry", "tasks/cancel", func(context.Context) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		tries++
		if tries == 2 {
			close(done)
			return true, nil
		}
		return false, errors.New("down")
	})
	mu.Lock()
	if tries != 1 {
		t.Errorf("first attempt not made inline: %d", tries)
	}
	mu.Unlock()
	<-sw.waits
	sw.release <- struct{}{}
	<-done
}

// Two replicas owe the upstream the same delivery (both resumed it from the
// shared store): only the one holding the key's lease sends; the other
// skips its attempts while the lease is held, and after the holder released
// it finds nothing owed (its send decides).
func TestLeaseOneReplicaSendsEachRetry(t *testing.T) {
	c := coord.NewLocal(nil)
	swA, swB := newStepWait(), newStepWait()
	a := New(Config{Wait: swA.wait, Leases: c, Replica: "a"})
	defer a.Close()
	b := New(Config{Wait: swB.wait, Leases: c, Replica: "b"})
	defer b.Close()

	var mu sync.Mutex
	sent := map[string]int{}
	owed, reachable := true, false
	send := func(who string) Send {
		return func(context.Context) (bool, error) {
			mu.Lock()
			defer mu.Unlock()
			if !owed {
				return true, nil // settled (by the other replica)
			}
			sent[who]++
			if !reachable {
				return false, errors.New("upstream unreachable")
			}
			owed = false
			return true, nil
		}
	}
	sentNow := func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(sent)
	}
	idle := func(o *Outbox) {
		for deadline := time.Now().Add(10 * time.Second); o.Pending() != 0; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("delivery still running after 10s")
			}
		}
	}

	a.DeliverFirst("k", "tasks/cancel", send("a")) // fails; A keeps the lease
	<-swA.waits
	b.DeliverFirst("k", "tasks/cancel", send("b")) // skipped: A holds the lease
	<-swB.waits
	swB.release <- struct{}{} // B's retry: skipped again
	<-swB.waits
	if got := sentNow(); got["a"] != 1 || got["b"] != 0 {
		t.Fatalf("sent = %v: B sent while A held the lease", got)
	}
	mu.Lock()
	reachable = true
	mu.Unlock()
	swA.release <- struct{}{} // A's retry goes through and ends the delivery
	idle(a)
	swB.release <- struct{}{} // B takes the free lease: nothing is owed any more
	idle(b)
	if got := sentNow(); got["a"] != 2 || got["b"] != 0 {
		t.Fatalf("sent = %v, want a:2 (first attempt, one retry) and b:0", got)
	}
}
