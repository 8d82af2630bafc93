//go:build !race

package interop_test

// raceBuild: see race_test.go.
const raceBuild = false
