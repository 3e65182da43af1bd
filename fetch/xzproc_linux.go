package fetch

import (
	"os/exec"
	"syscall"
)

// detach puts xz in a process group of its own, so that the terminal's Ctrl-C reaches
// pkg alone, which stops the fetch and says it was interrupted; xz, killed by the same
// signal, would have made the fetch fail as a bad stream first.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}
