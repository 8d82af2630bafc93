//go:build race

package router

// raceBuild: the race detector drops sync.Pool entries at random, so pooled
// objects (encoding/json's scanner) are sometimes allocated again.
const raceBuild = true
