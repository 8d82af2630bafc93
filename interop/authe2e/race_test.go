//go:build race

package authe2e_test

// raceBuild: the bridge binary is built with the race detector too.
const raceBuild = true
