//go:build unix

package backend

import (
	"errors"
	"os"
	"syscall"
)

// sigTerm and sigKill are the signals used for graceful and forced shutdown.
var (
	sigTerm os.Signal = syscall.SIGTERM
	sigKill os.Signal = syscall.SIGKILL
)

// killGroup sends sig to the process group pgid (children are started with
// Setpgid, so the group id equals the child's pid). A group that no longer
// exists is not an error.
func killGroup(pgid int, sig os.Signal) error {
	if pgid <= 0 {
		return nil
	}
	err := syscall.Kill(-pgid, sig.(syscall.Signal))
	if err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}
