//go:build race

package watch

// raceBuild: the race detector's bookkeeping makes heap figures larger;
// bounds on them allow for it.
const raceBuild = true
