//go:build unix

package router_test

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the process has used (user and system): on a
// loaded machine it says what a request costs better than wall time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
