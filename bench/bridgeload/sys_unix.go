//go:build unix

package bridgeload

import (
	"fmt"
	"syscall"
	"time"
)

// RaiseNoFile raises this process's open-file limit to at least want
// (raising the hard limit needs privileges; without them the soft limit goes
// as far as the hard one). Children inherit it. It returns the limit now in
// force.
func RaiseNoFile(want uint64) (string, uint64, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return "", 0, fmt.Errorf("getrlimit: %w", err)
	}
	if lim.Cur < want {
		next := lim
		next.Cur = want
		if next.Max < want {
			next.Max = want
		}
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &next); err != nil {
			next = lim
			next.Cur = lim.Max
			_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &next)
		}
		_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim)
	}
	return fdLimitNote(lim.Cur, lim.Max), lim.Cur, nil
}

// SelfCPU is the CPU time (user + system) this process has used.
func SelfCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}
