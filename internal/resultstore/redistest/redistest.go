// Package redistest runs a real redis-server on a free loopback port for
// tests. One server is meant to be shared by a test package (start it in
// TestMain).
package redistest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// readyWithin bounds how long Start waits for the server to answer PING.
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

// Start starts redis-server on a free loopback port, without persistence,
// and returns once it answers PING.
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
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("starting redis-server: %w", err)
	}
	exited := make(chan error, 1)
	s.exited = exited
	go func() { exited <- s.cmd.Wait(); close(exited) }()
	c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1})
	defer c.Close()
	deadline := time.NewTimer(readyWithin)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		select {
		case err := <-exited:
			s.cmd = nil
			return fmt.Errorf("redis-server on port %s exited: %v", s.port, err)
		case <-deadline.C:
			s.Kill()
			return fmt.Errorf("redis-server on port %s did not answer PING within %v", s.port, readyWithin)
		case <-tick.C:
		}
	}
}

// Restart kills the server (its data is lost) and starts it again on the
// same port, returning once it answers PING.
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
