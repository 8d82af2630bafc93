//go:build race

package router_test

// hostileRace: the race detector slows every byte loop many times over and
// drops sync.Pool entries at random (pooled buffers are allocated again), so
// TestHostileInputs allows more time and a little more allocation under it.
const hostileRace = true
