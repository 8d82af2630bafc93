//go:build !linux

package cluster

import "os/exec"

// dieWithParent has no equivalent outside Linux: Close kills the replicas.
func dieWithParent(*exec.Cmd) {}
