//go:build !unix

package bridgeload

import (
	"errors"
	"time"
)

// RaiseNoFile is not supported here.
func RaiseNoFile(want uint64) (string, uint64, error) {
	return "", 0, errors.New("RLIMIT_NOFILE: not supported on this platform")
}

// SelfCPU is not supported here.
func SelfCPU() (time.Duration, error) {
	return 0, errors.New("CPU time: not supported on this platform")
}
