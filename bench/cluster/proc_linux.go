package cluster

import (
	"os/exec"
	"syscall"
)

// dieWithParent asks the kernel to kill the replica when this process dies,
// so a crashed test or chaos run leaves no bridge behind.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
