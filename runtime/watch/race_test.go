package watch

import (
	"context"
	"testing"

	"github.com/tasksbridge/tasksbridge/modern"
)

// TestAttachWithEndedContextIsRaceFree covers the window in which the
// context hook closes a subscription while Attach is still returning it:
// Close must not read the hook's stop function unsynchronised (-race), and
// the subscription must end (its channel closes).
func TestAttachWithEndedContextIsRaceFree(t *testing.T) {
	src := newFakeSource()
	src.set(task("x", modern.StatusWorking, 1000))
	m := NewManager(Config{Source: func(Key) (Source, error) { return src, nil }, Clock: newFakeClock(), DisablePush: true})
	defer m.Close()
	for i := 0; i < 50; i++ {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		s, err := m.Attach(ctx, Key{Target: "t", TaskID: "x"})
		if err != nil {
			t.Fatalf("Attach: %v", err)
		}
		s.Close() // a second Close is a no-op whichever ran first
		for range s.C {
		}
	}
}
