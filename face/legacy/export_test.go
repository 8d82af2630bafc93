package legacyface

import (
	"context"
	"fmt"
)

// Sweep runs the session table's periodic sweep now (tests with an
// injected clock).
func Sweep(b *Bridge) { b.sweep() }

// DemoteAll makes every idle session that can be dormant (tests).
func (b *Bridge) DemoteAll() {
	for {
		b.mu.Lock()
		n := b.idle.n
		b.mu.Unlock()
		if n == 0 {
			return
		}
		b.demoteBeyond(0)
	}
}

// AwaitParked waits until exactly n waits are parked (parked.go).
func AwaitParked(ctx context.Context, b *Bridge, n int) error {
	for {
		ch := b.parking.moved.next()
		if b.ParkedWaits() == n {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("%d waits parked, want %d: %w", b.ParkedWaits(), n, ctx.Err())
		}
	}
}
