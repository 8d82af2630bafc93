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

// AwaitParkedIdle waits until no parked-wait hub has work running and at
// least watchers task watchers are parked (parked.go, runtime/watch).
func AwaitParkedIdle(ctx context.Context, b *Bridge, watchers int) error {
	if !b.watch.WaitParked(ctx, func(n int) bool { return n >= watchers }) {
		return fmt.Errorf("%d watchers parked, want %d: %w", b.watch.Parked(), watchers, ctx.Err())
	}
	for {
		ch := b.parking.moved.next()
		if b.parking.driving.Load() == 0 {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("%d hubs still driving: %w", b.parking.driving.Load(), ctx.Err())
		}
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

// HubsDriving returns the hubs whose drive runs or waits for its turn.
func HubsDriving(b *Bridge) int64 { return b.parking.driving.Load() }
