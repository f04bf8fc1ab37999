// Package redistest runs a real redis-server on a free loopback port for
// tests. One server is meant to be shared by a test package (start it in
// TestMain).
package redistest

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"
)

// readyWithin bounds how long Start waits for the server to get ready.
const readyWithin = 15 * time.Second

// Server is a redis-server child process.
type Server struct {
	// Addr is host:port of the server.
	Addr   string
	port   string
	cmd    *exec.Cmd
	exited chan error // receives cmd.Wait's result once
	dir    string
}

// ErrNoRedis means redis-server is not installed; tests skip with it.
var ErrNoRedis = errors.New("redis-server not found on PATH (Debian package redis-server; `make deps` installs it when apt-get can)")

// ForTest starts a server for t, stopped when t ends; t is skipped when
// redis-server is not installed and fails on any other error.
func ForTest(t testing.TB) *Server {
	t.Helper()
	srv, err := Start()
	if errors.Is(err, ErrNoRedis) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	return srv
}

// Start starts redis-server on a free loopback port, without persistence,
// and returns once it accepts connections (it says so on its stdout).
func Start() (*Server, error) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		return nil, ErrNoRedis
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	dir, err := os.MkdirTemp("", "redistest")
	if err != nil {
		return nil, err
	}
	s := &Server{Addr: "127.0.0.1:" + port, port: port, dir: dir}
	if err := s.start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

// URL is the redis:// URL of database 0.
func (s *Server) URL() string { return "redis://" + s.Addr + "/0" }

func (s *Server) start() error {
	s.cmd = exec.Command("redis-server", "--bind", "127.0.0.1", "--port", s.port,
		"--save", "", "--appendonly", "no", "--dir", s.dir)
	out := &readyWatch{ready: make(chan struct{})}
	s.cmd.Stdout = out
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("starting redis-server: %w", err)
	}
	exited := make(chan error, 1)
	s.exited = exited
	go func() { exited <- s.cmd.Wait(); close(exited) }()
	deadline := time.NewTimer(readyWithin)
	defer deadline.Stop()
	select {
	case <-out.ready:
		return nil
	case err := <-exited:
		s.cmd = nil
		return fmt.Errorf("redis-server on port %s exited: %v\n%s", s.port, err, out.before())
	case <-deadline.C:
		s.Kill()
		return fmt.Errorf("redis-server on port %s did not get ready within %v\n%s", s.port, readyWithin, out.before())
	}
}

// readyLine is what redis-server logs once it accepts connections (Redis
// 2.6 to 7, followed by " tcp" since 7.2).
const readyLine = "Ready to accept connections"

// readyWatch is redis-server's stdout: it closes ready when the server logs
// readyLine, and keeps the log up to it for the error of a failed start.
type readyWatch struct {
	mu    sync.Mutex
	log   []byte
	ready chan struct{}
	done  bool
}

func (w *readyWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return len(p), nil
	}
	w.log = append(w.log, p...)
	if bytes.Contains(w.log, []byte(readyLine)) {
		w.done = true
		w.log = nil
		close(w.ready)
	} else if len(w.log) > 64<<10 {
		w.log = append(w.log[:0], w.log[len(w.log)-8<<10:]...)
	}
	return len(p), nil
}

// before returns the log written so far (before readyLine).
func (w *readyWatch) before() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.log)
}

// Restart kills the server (its data is lost) and starts it again on the
// same port, returning once it accepts connections.
func (s *Server) Restart() error {
	s.Kill()
	return s.start()
}

// Kill stops the server at once.
func (s *Server) Kill() {
	if s.cmd != nil {
		s.cmd.Process.Kill()
		<-s.exited
		s.cmd = nil
	}
}

// Stop kills the server and removes its directory.
func (s *Server) Stop() {
	s.Kill()
	os.RemoveAll(s.dir)
}
