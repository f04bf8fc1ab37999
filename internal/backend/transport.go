package backend

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/backendauth"
)

// newTransport builds the go-sdk transport for one connection attempt. For
// stdio backends it also fills c.proc and c.stderr.
func (b *backend) newTransport(ctx context.Context, c *conn) (mcp.Transport, error) {
	s := &b.spec
	switch s.Transport {
	case config.TransportStdio:
		cmd := exec.Command(s.Command, s.Args...)
		cmd.Env = backendEnv(os.Environ(), s.InheritEnv, s.Env)
		cmd.Dir = s.Cwd
		c.stderr = &lineWriter{ring: b.ring, log: b.log}
		cmd.Stderr = c.stderr
		// If the child exits but a grandchild keeps stderr open, do not let
		// cmd.Wait (called by the SDK when the connection closes) hang.
		cmd.WaitDelay = b.opts.KillAfter
		setProcAttrs(cmd)
		c.proc = &procHandle{cmd: cmd}
		if c.owner == "" {
			b.mu.Lock()
			b.proc = c.proc
			b.mu.Unlock()
		}
		return &stdioTransport{cmd: cmd, terminate: b.opts.KillAfter, proc: c.proc}, nil
	case config.TransportStreamableHTTP:
		return &mcp.StreamableClientTransport{Endpoint: s.URL, HTTPClient: newHTTPClient(s.Headers, b.auth)}, nil
	case config.TransportSSE:
		return &mcp.SSEClientTransport{Endpoint: s.URL, HTTPClient: newHTTPClient(s.Headers, b.auth)}, nil
	case TransportCustom:
		t, err := s.Dial(ctx)
		if err != nil {
			return nil, fmt.Errorf("dial: %w", err)
		}
		if t == nil {
			return nil, fmt.Errorf("dial: returned a nil transport")
		}
		return t, nil
	}
	return nil, fmt.Errorf("unknown transport %q", s.Transport)
}

// stdioTransport starts a stdio backend and connects to it (commandConn),
// forking the child from the dedicated spawner thread (see proc_linux.go);
// the process handle learns when the child has started.
type stdioTransport struct {
	cmd       *exec.Cmd
	terminate time.Duration // how long Close waits before SIGTERM, then SIGKILL
	proc      *procHandle
}

// Connect implements mcp.Transport.
func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	var (
		conn mcp.Connection
		err  error
	)
	spawnOnLockedThread(func() { conn, err = startCommand(t.cmd, t.terminate, t.proc.markReaped) })
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", t.cmd.Path, err)
	}
	t.proc.markStarted()
	return conn, nil
}

// procHandle tracks the child process of a stdio connection and signals it
// together with its process group.
type procHandle struct {
	cmd *exec.Cmd

	mu      sync.Mutex
	started bool
	killReq bool // SIGKILL requested before the process started

	reaped atomic.Bool // the child has exited and been waited for (commandConn.end)
}

// markReaped records that the child has exited and been waited for.
func (h *procHandle) markReaped() { h.reaped.Store(true) }

func (h *procHandle) markStarted() {
	h.mu.Lock()
	h.started = true
	kill := h.killReq
	h.mu.Unlock()
	if kill {
		h.signal(sigKill)
	}
}

// pid returns the child's pid, or 0 if it has not started.
func (h *procHandle) pid() int {
	if h == nil {
		return 0
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.started {
		return 0
	}
	return h.cmd.Process.Pid
}

// signal sends sig to the child's process group and to the child itself
// (the latter through os.Process, which is immune to pid reuse). A SIGKILL
// requested before the child has started is delivered as soon as it starts.
func (h *procHandle) signal(sig os.Signal) {
	if h == nil {
		return
	}
	h.mu.Lock()
	if !h.started {
		if sig == sigKill {
			h.killReq = true
		}
		h.mu.Unlock()
		return
	}
	p := h.cmd.Process
	h.mu.Unlock()
	_ = killGroup(p.Pid, sig)
	_ = p.Signal(sig)
}

// gone reports that the child has exited and been reaped: no request
// written now can reach it. It asks no system call (it is asked on every
// call): the connection's end records the reaping.
func (h *procHandle) gone() bool { return h != nil && h.reaped.Load() }

// exitStatus describes how the child exited. It must only be called once
// the connection is done (the SDK has waited for the process by then).
func (h *procHandle) exitStatus() string {
	if h == nil || h.cmd.ProcessState == nil {
		return ""
	}
	return h.cmd.ProcessState.String()
}

// newHTTPClient returns a client that adds headers to every request, and
// the backend's access token when it has backends.<name>.auth (set last,
// so it is the one Authorization; config refuses both). The token is
// chosen per request from its context: a call's principal reaches here
// (the go-sdk sends each request with its caller's context).
func newHTTPClient(headers map[string]string, auth *backendauth.Authorizer) *http.Client {
	var rt http.RoundTripper = http.DefaultTransport
	if auth != nil {
		rt = auth.Wrap(rt)
	}
	if len(headers) > 0 {
		rt = &headerRoundTripper{base: rt, headers: maps.Clone(headers)}
	}
	if rt == http.DefaultTransport {
		return &http.Client{}
	}
	return &http.Client{Transport: rt}
}

// headerRoundTripper adds fixed headers to every request.
type headerRoundTripper struct {
	base    http.RoundTripper
	headers map[string]string
}

// RoundTrip implements http.RoundTripper.
func (t *headerRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context()) // RoundTrippers must not modify the request
	for k, v := range t.headers {
		req.Header.Set(k, v)
	}
	return t.base.RoundTrip(req)
}
