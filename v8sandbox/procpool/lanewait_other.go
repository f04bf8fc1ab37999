//go:build !linux

package procpool

import (
	"errors"
	"syscall"
)

// watchLane leaves fd blocking on systems without epoll: a waiting thread
// sleeps in read(2) at once.
func watchLane(int) (int, bool) { return -1, false }

func sleepUntilReadable(int) error { return errors.New("no epoll on this system") }

func yieldCPU() {}

// readNow is read(2): a lane's descriptor is blocking on these systems.
func readNow(fd int, p []byte) (int, error) { return syscall.Read(fd, p) }
