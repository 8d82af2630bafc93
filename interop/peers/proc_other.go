//go:build !unix

package peers

import (
	"os"
	"os/exec"
)

var (
	sigTerm os.Signal = os.Kill
	sigKill os.Signal = os.Kill
)

// setProcessGroup has no process groups to set up outside unix.
func setProcessGroup(*exec.Cmd) {}

// signalGroup kills just the child outside unix.
func signalGroup(cmd *exec.Cmd, _ os.Signal) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
