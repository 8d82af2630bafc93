package steps

import (
	"runtime"
	"testing"
	"time"
)

// A Runner runs at most max steps at once, in the order they came; a
// step that detaches hands its place to the next pending one and goes on.
func TestBoundsAndDetach(t *testing.T) {
	s := New(2)
	entered := make(chan int, 8)
	release := make([]chan struct{}, 5)
	detach := make([]chan struct{}, 5)
	for i := range release {
		release[i], detach[i] = make(chan struct{}), make(chan struct{}, 1)
		s.Run(func(sl *Slot) {
			entered <- i
			select {
			case <-release[i]:
			case <-detach[i]:
				sl.Detach()
				sl.Detach() // twice is harmless
				<-release[i]
			}
		})
	}
	next := func() int {
		t.Helper()
		return <-entered
	}
	got := map[int]bool{next(): true, next(): true}
	if !got[0] || !got[1] {
		t.Fatalf("first steps = %v, want 0 and 1", got)
	}
	select {
	case i := <-entered:
		t.Fatalf("step %d started with both places held", i)
	default:
	}
	detach[0] <- struct{}{} // step 0 waits on something else now
	if i := next(); i != 2 {
		t.Fatalf("after a detach, step %d started, want 2", i)
	}
	close(release[1]) // step 1 ends: its goroutine takes step 3
	if i := next(); i != 3 {
		t.Fatalf("after an end, step %d started, want 3", i)
	}
	close(release[0]) // detached: takes nothing more
	close(release[2])
	if i := next(); i != 4 {
		t.Fatalf("step %d started, want 4", i)
	}
	close(release[3])
	close(release[4])
	// The last goroutines give their places up once their steps return.
	for deadline := time.Now().Add(10 * time.Second); ; runtime.Gosched() {
		running, queued := s.Running(), s.Pending()
		if running == 0 && queued == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after all ran: %d places held, %d queued", running, queued)
		}
	}
}
