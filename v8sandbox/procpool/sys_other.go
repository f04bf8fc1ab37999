//go:build !linux

package procpool

import (
	"errors"
	"os"
	"syscall"
)

// On systems other than Linux the pool works but the worker is only lightly
// hardened: no parent-death signal, no RSS watch, no descriptor sweep.

func defaultCommand() ([]string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return []string{exe, WorkerCommand}, nil
}

func sysProcAttr(nsLevel) *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

func nsLevels(ConfinementMode) []nsLevel { return []nsLevel{{why: "not on this system"}} }

func protectParent(ConfinementMode) {}

func hardenProcess() (in, out *os.File, err error) {
	os.Clearenv()
	if err := os.Chdir("/"); err != nil {
		return nil, nil, err
	}
	return os.Stdin, os.Stdout, nil
}

func readRSS(int) (int64, error) { return 0, errors.New("RSS is not available on this system") }

func readAnonRSS(int) (int64, error) {
	return 0, errors.New("RSS is not available on this system")
}

func oomKills() (int64, bool) { return 0, false }

const pipeBytes = 64 << 10

func fitPipe(*os.File, int) {}

func setWorkerTimerSlack() error { return nil }
