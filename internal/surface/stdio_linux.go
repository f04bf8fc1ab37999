package surface

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// pollableStdin returns a file reading what stdin reads, in Go's poller:
// its reads park the goroutine instead of a thread (os.Stdin reads block
// one), so a message's goroutine runs on the thread that woke for it, and
// closing the file ends a read in progress. A pipe is opened anew through
// /proc/self/fd/0: a file description of our own, stdin's untouched. A
// socket (Node's child_process gives one) is duplicated and made
// non-blocking; that flag belongs to the socket's file description, which
// fd 0 shares, so it is done only when stdout is not the same socket
// (os.Stdout writes expect a blocking one). A terminal or a file is
// refused: the caller keeps the go-sdk's transport for them.
func pollableStdin() (*os.File, error) {
	var in, out syscall.Stat_t
	if err := syscall.Fstat(0, &in); err != nil {
		return nil, fmt.Errorf("stdin: %w", err)
	}
	switch in.Mode & syscall.S_IFMT {
	case syscall.S_IFIFO:
		return os.OpenFile("/proc/self/fd/0", os.O_RDONLY|syscall.O_NONBLOCK, 0)
	case syscall.S_IFSOCK:
		if err := syscall.Fstat(1, &out); err == nil && out.Dev == in.Dev && out.Ino == in.Ino {
			return nil, errors.New("stdin and stdout are one socket")
		}
		fd, err := syscall.Dup(0)
		if err != nil {
			return nil, fmt.Errorf("stdin: %w", err)
		}
		syscall.CloseOnExec(fd)
		if err := syscall.SetNonblock(fd, true); err != nil {
			syscall.Close(fd)
			return nil, fmt.Errorf("stdin: %w", err)
		}
		return os.NewFile(uintptr(fd), "/dev/stdin"), nil
	}
	return nil, errors.New("stdin is neither a pipe nor a socket")
}
