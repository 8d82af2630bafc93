//go:build race

package legacyface_test

// raceBuild: the race detector's bookkeeping makes heap figures about
// twice as large; bounds on them allow for it.
const raceBuild = true
