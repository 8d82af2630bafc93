//go:build race

package interop_test

// raceBuild: this test binary runs under the race detector, so the bridge
// binary it builds does too.
const raceBuild = true
