package redistest

import (
	"os/exec"
	"syscall"
)

// dieWithParent asks the kernel to kill the server when this process dies,
// so a crashed test leaves no Redis behind.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
