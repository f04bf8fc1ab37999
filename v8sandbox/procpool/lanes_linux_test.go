package procpool

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestParentCallPipeOutsideGoPoller: the parent's end of a lane's call
// pipe is non-blocking and watched by the lane's own epoll instance only,
// not by Go's poller (whose thread a call would otherwise wake for
// nothing); it reads calls that come while it polls and while it sleeps,
// and ends when the worker's end closes. The worker's end stays blocking.
func TestParentCallPipeOutsideGoPoller(t *testing.T) {
	calls, callW, err := newCallPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer calls.close()
	if calls.ep < 0 {
		t.Fatal("the call pipe is not watched by an epoll instance of its own")
	}
	if fl, err := fcntlFlags(calls.fd); err != nil || fl&syscall.O_NONBLOCK == 0 {
		t.Fatalf("the parent's end is blocking (flags %#x, %v)", fl, err)
	}
	if fl, err := fcntlFlags(int(callW.Fd())); err != nil || fl&syscall.O_NONBLOCK != 0 {
		t.Fatalf("the worker's end is non-blocking (flags %#x, %v)", fl, err)
	}
	watchers := epollsWatching(t, calls.fd)
	if len(watchers) != 1 || watchers[0] != calls.ep {
		t.Fatalf("fd %d is watched by epoll instances %v, want only its own (%d)", calls.fd, watchers, calls.ep)
	}

	got := make(chan string)
	go func() {
		defer close(got)
		buf := make([]byte, 16)
		for {
			n, err := calls.Read(buf)
			if err != nil {
				got <- "err: " + err.Error()
				return
			}
			got <- string(buf[:n])
			calls.answered = time.Now() // poll for the next one
		}
	}()
	for _, msg := range []string{"asleep", "polled", "again"} {
		if _, err := callW.Write([]byte(msg)); err != nil {
			t.Fatal(err)
		}
		if g := <-got; g != msg {
			t.Fatalf("read %q, want %q", g, msg)
		}
	}
	callW.Close()
	if g := <-got; g != "err: "+io.EOF.Error() {
		t.Fatalf("after the worker's end closed: %q, want EOF", g)
	}
}

func fcntlFlags(fd int) (int, error) {
	r, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFL, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(r), nil
}

// epollsWatching lists this process's epoll instances that watch fd (from
// /proc/self/fdinfo: one "tfd:" line per watched descriptor).
func epollsWatching(t *testing.T, fd int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	var eps []int
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if link, _ := os.Readlink("/proc/self/fd/" + e.Name()); link != "anon_inode:[eventpoll]" {
			continue
		}
		f, err := os.Open("/proc/self/fdinfo/" + e.Name())
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), fmt.Sprintf("tfd: %8d ", fd)) || strings.HasPrefix(sc.Text(), fmt.Sprintf("tfd: %d ", fd)) {
				eps = append(eps, n)
			}
		}
		f.Close()
	}
	return eps
}
