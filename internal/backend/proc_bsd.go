//go:build unix && !linux

package backend

import (
	"os/exec"
	"syscall"
)

// spawnOnLockedThread runs f directly: without Pdeathsig (Linux only) the
// forking thread does not matter.
func spawnOnLockedThread(f func()) { f() }

// setProcAttrs puts the child in its own process group so that shutdown can
// signal the whole tree. There is no portable equivalent of Linux's Pdeathsig
// on these systems: if the gateway is SIGKILLed, children notice only when
// their stdin reaches EOF (which well-behaved MCP stdio servers treat as a
// shutdown request).
func setProcAttrs(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}
