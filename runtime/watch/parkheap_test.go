package watch

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/modern"
)

// liveHeap is the heap in use after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// A parked watcher whose task is pushed keeps only what its next event
// needs: 2,000 of them, each with its subscriber, hold a bounded number of
// live bytes each (a wait parked on thousands of distinct tasks costs its
// records, docs/ARCHITECTURE.md, One watcher per upstream task).
func TestParkedWatcherLiveHeapIsBounded(t *testing.T) {
	const n = 2000
	src := &parkSource{tasks: map[string]*modern.DetailedTask{}, gets: map[string]int{}}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("T%05d", i)
		src.set(task(ids[i], modern.StatusWorking, 1000))
	}
	m := NewManager(Config{
		Source: func(Key) (Source, error) { return src, nil },
		Jitter: -1, Logger: slog.New(slog.DiscardHandler),
		IdleTimeout: time.Hour, PushPollInterval: time.Hour, ListenCoalesce: -1,
	})
	t.Cleanup(m.Close)
	// The runtime keeps a record (about 0.5 KiB) for every goroutine ever
	// alive at once, reused, never freed; the attach burst below briefly
	// runs up to one short-lived goroutine per watcher (its first steps, the
	// shared listen's answer). Grow that pool first, so that what is
	// measured is what parked watchers keep (they keep no goroutine,
	// TestParkedWatchersHoldNoGoroutine), not the burst's high-water mark:
	// without this the figure moves by up to 0.4 KiB between runs.
	var burst sync.WaitGroup
	release := make(chan struct{})
	for range 2 * n {
		burst.Go(func() { <-release })
	}
	close(release)
	burst.Wait()
	// The source's own task copies are the upstream's, not the watchers'.
	before := liveHeap()
	// One cleanup for all: a t.Cleanup record per subscription (attachAll)
	// is the test's own bookkeeping, about 0.44 KiB each, not a watcher's.
	subs := make([]*Subscription, n)
	t.Cleanup(func() {
		for _, s := range subs {
			if s != nil {
				s.Close()
			}
		}
	})
	for i, id := range ids {
		s, err := m.Attach(context.Background(), key(id))
		if err != nil {
			t.Fatal(err)
		}
		subs[i] = s
	}
	waitParked(t, m, fmt.Sprintf("reached %d", n), func(k int) bool { return k == n })
	for _, s := range subs {
		until(t, s, func(s Snapshot) bool { return s.Task != nil })
	}
	after := liveHeap()
	runtime.KeepAlive(subs)
	per := float64(int64(after)-int64(before)) / n
	// About 1.3 KiB each today: the entry and its latest snapshot, the
	// subscription and its snapshot channel, the watcher and its loop
	// state, the shared stream registration, the task as read, and the
	// test upstream's read count. By this measure it was 2.0 KiB before the
	// entry's wake and kick channels, a timer per parked watcher, a
	// snapshot copy per subscription and a delivery channel per
	// registration went; a cancelable context, a map per entry and an
	// answer channel kept per parked watcher made it more again.
	limit := 1600.0
	if raceBuild {
		limit = 1800 // the race detector's bookkeeping adds a little
	}
	t.Logf("live heap per parked watcher: %.0f bytes (limit %.0f)", per, limit)
	if per > limit {
		t.Fatalf("live heap per parked watcher = %.0f bytes, want ≤ %.0f", per, limit)
	}
}

// Waiters leaving in any order end only their own waits: the ones left,
// wherever they sat among the subscribers, still get the task's end.
func TestWaitersLeaveInAnyOrder(t *testing.T) {
	src := newFakeSource()
	src.set(task("T", modern.StatusWorking, 1000))
	m, clk := newTestManager(t, src, nil)
	subs := attachAll(t, m, "T", "T", "T", "T", "T")
	for _, s := range subs {
		until(t, s, seqAtLeast(1))
	}
	for _, i := range []int{1, 0, 4} {
		subs[i].Close()
		for range subs[i].C {
		}
	}
	src.set(task("T", modern.StatusCompleted, 1000))
	clk.BlockUntil(t, 1)
	clk.Advance(time.Second)
	for _, i := range []int{2, 3} {
		if snap := until(t, subs[i], terminal); snap.Task.Status != modern.StatusCompleted {
			t.Fatalf("waiter %d got %v", i, snap.Task.Status)
		}
	}
	subs[2].Close()
	subs[3].Close()
	if got := m.Watching(); got != 0 {
		t.Fatalf("watchers = %d after every waiter left and the task ended, want 0", got)
	}
}
