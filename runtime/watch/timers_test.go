package watch

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/modern"
)

// timedSource is a parkSource that records when each task was read.
type timedSource struct {
	*parkSource
	mu    sync.Mutex
	reads map[string][]time.Time
}

func (s *timedSource) GetTask(ctx context.Context, id string) (*modern.DetailedTask, error) {
	s.mu.Lock()
	s.reads[id] = append(s.reads[id], time.Now())
	s.mu.Unlock()
	return s.parkSource.GetTask(ctx, id)
}

// The Manager's one timer wakes each parked watcher at its own next step,
// never before it: pushed tasks get their safety reads (M-33) every
// PushPollInterval, not sooner, and watchers left by their subscribers
// retire after IdleTimeout while the others stay parked (the timer heap,
// see parkTimers).
func TestParkedWatchersWakeOnTime(t *testing.T) {
	const n = 200
	const every = 40 * time.Millisecond
	ps := &parkSource{tasks: map[string]*modern.DetailedTask{}, gets: map[string]int{}}
	src := &timedSource{parkSource: ps, reads: map[string][]time.Time{}}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("S%04d", i)
		ps.set(task(ids[i], modern.StatusWorking, 1000))
	}
	m := NewManager(Config{
		Source: func(Key) (Source, error) { return src, nil },
		Jitter: -1, Logger: slog.New(slog.DiscardHandler),
		IdleTimeout: time.Hour, PushPollInterval: every, ListenCoalesce: -1,
	})
	t.Cleanup(m.Close)
	subs := attachAll(t, m, ids...)
	// Each sees its first read, the read after the listen's acknowledgement
	// and then safety reads: six snapshots take at least four intervals.
	for _, s := range subs {
		until(t, s, seqAtLeast(6))
	}
	src.mu.Lock()
	for _, id := range ids {
		rs := src.reads[id]
		// From the third read on, each is a safety read scheduled one
		// interval after the previous read ended.
		for i := 2; i < len(rs); i++ {
			if gap := rs[i].Sub(rs[i-1]); gap < every {
				t.Errorf("%s: read %d came %v after the previous one, want ≥ %v", id, i, gap, every)
			}
		}
	}
	src.mu.Unlock()

	// Idle retirement: the safety reads off, half the subscribers leave,
	// their watchers retire when their idle time has passed.
	const idle = 60 * time.Millisecond
	m2 := NewManager(Config{
		Source: func(Key) (Source, error) { return ps, nil },
		Jitter: -1, Logger: slog.New(slog.DiscardHandler),
		IdleTimeout: idle, PushPollInterval: time.Hour, ListenCoalesce: -1,
	})
	t.Cleanup(m2.Close)
	subs2 := attachAll(t, m2, ids...)
	waitParked(t, m2, fmt.Sprintf("reached %d", n), func(k int) bool { return k == n })
	left := time.Now()
	for _, s := range subs2[:n/2] {
		s.Close() // wakes its watcher (synchronously unparked), which parks again
	}
	waitParked(t, m2, "parked again after the subscribers left", func(k int) bool { return k == n })
	waitParked(t, m2, fmt.Sprintf("dropped to %d", n/2), func(k int) bool { return k == n/2 })
	if el := time.Since(left); el < idle {
		t.Fatalf("watchers retired %v after their subscribers left, want ≥ %v", el, idle)
	}
	// A retired watcher leaves its shared stream after it stopped running.
	waitMux(t, m2, fmt.Sprintf("down to %d registrations", n/2), func(mx *muxer) bool {
		k := 0
		for _, g := range mx.groups {
			for _, sh := range g.shards {
				k += len(sh.subs)
			}
		}
		return k == n/2
	})
	if w := m2.Watching(); w != n/2 {
		t.Fatalf("watching = %d after half the subscribers left, want %d", w, n/2)
	}
	for _, s := range subs2[n/2:] {
		if snap := s.Latest(); snap.Task == nil || snap.Terminal() {
			t.Fatalf("a watched task's snapshot: %+v", snap)
		}
	}
}
