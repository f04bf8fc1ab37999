//go:build !unix

package backend

import (
	"os"
	"os/exec"
)

// On non-Unix systems there are no process groups or termination signals:
// both "signals" kill the direct child (see procHandle.signal).
var (
	sigTerm os.Signal = os.Kill
	sigKill os.Signal = os.Kill
)

func spawnOnLockedThread(f func()) { f() }

func setProcAttrs(*exec.Cmd) {}

func killGroup(int, os.Signal) error { return nil }
