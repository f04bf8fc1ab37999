//go:build linux

package backend

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// Linux process supervision.
//
// Every stdio backend is started in its own process group (Setpgid), so that
// shutdown can signal the whole tree the backend may have spawned (npx → node,
// uvx → python, shell wrappers, ...) with kill(-pgid, sig).
//
// In addition the direct child gets Pdeathsig = SIGKILL, so that it dies even
// when the gateway itself is SIGKILLed or crashes and never runs its shutdown
// path. Pdeathsig has a well-known sharp edge (https://go.dev/issue/27505):
// the kernel delivers the signal when the *OS thread* that forked the child
// exits, not when the process exits. The Go runtime normally keeps threads
// alive, but it does terminate a thread when a goroutine that called
// runtime.LockOSThread exits without unlocking it; if some unrelated code did
// that on the thread that happened to fork our child, the backend would be
// killed for no reason.
//
// To make this robust, all stdio backends are forked from one dedicated
// goroutine that locks itself to its OS thread and never returns (see
// spawnOnLockedThread). That thread therefore lives exactly as long as the
// gateway process, which is the lifetime Pdeathsig is meant to track. The cost
// is that process starts are serialised, which is negligible (fork+exec takes
// microseconds to a few milliseconds).
//
// Remaining risk, documented rather than solved: Pdeathsig only covers the
// direct child. Grandchildren (e.g. the node process under npx) are killed by
// the process-group signals on every orderly shutdown or restart, but if the
// gateway is SIGKILLed they only die if the direct child takes them down (most
// wrappers do, when their stdin closes or they are killed). Using a PID
// namespace or cgroup would close this gap at the cost of privileges.

var spawner struct {
	once sync.Once
	reqs chan func()
}

// spawnOnLockedThread runs f (which must start the child process) on the
// dedicated, permanently locked spawner thread and waits for it to return.
func spawnOnLockedThread(f func()) {
	spawner.once.Do(func() {
		spawner.reqs = make(chan func())
		go func() {
			// Never unlocked and never returns: the thread must outlive every
			// child forked from it, see the comment above.
			runtime.LockOSThread()
			for req := range spawner.reqs {
				req()
			}
		}()
	})
	done := make(chan struct{})
	spawner.reqs <- func() {
		defer close(done)
		f()
	}
	<-done
}

// setProcAttrs puts the child in its own process group and arranges for it to
// be SIGKILLed if the gateway dies.
func setProcAttrs(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
