package backend

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/jsonrpcio"
)

// maxStdioFrame bounds one message from a stdio backend, as the go-sdk's
// stdio transports do (mcp.DefaultMaxLineLength).
const maxStdioFrame = mcp.DefaultMaxLineLength

// commandConn is the connection to a stdio backend: newline-delimited
// JSON-RPC on the child's stdin and stdout. It replaces the go-sdk's
// CommandTransport connection, whose reader goroutine hands every message
// over a channel and whose decoder allocates 32 KB per message
// (internal/jsonrpcio says more): Read reads in the caller's goroutine.
// Close ends the child as the go-sdk does (and as the MCP specification
// asks): stdin closed, then SIGTERM after terminate, then SIGKILL.
type commandConn struct {
	cmd       *exec.Cmd
	stdin     io.WriteCloser
	stdout    io.Reader
	r         *jsonrpcio.Reader
	terminate time.Duration

	writeMu sync.Mutex

	closeOnce sync.Once
	closeErr  error
}

// startCommand starts cmd with pipes on its stdin and stdout and returns
// the connection over them.
func startCommand(cmd *exec.Cmd, terminate time.Duration) (*commandConn, error) {
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &commandConn{cmd: cmd, stdin: stdin, stdout: stdout, r: jsonrpcio.NewReader(stdout, maxStdioFrame), terminate: terminate}, nil
}

// SessionID implements mcp.Connection: stdio has no session id.
func (c *commandConn) SessionID() string { return "" }

// Read implements mcp.Connection. It is called by one goroutine (the
// go-sdk's reader); it returns once the child's stdout has a message, ends
// or is closed by Close.
func (c *commandConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	msg, err := c.r.Read()
	if errors.Is(err, os.ErrClosed) {
		err = io.EOF // closed by Close
	}
	return msg, err
}

// Write implements mcp.Connection: one write of the message and its newline.
func (c *commandConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpcio.Encode(msg)
	if err != nil {
		return err
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err = c.stdin.Write(data)
	return err
}

// Close implements mcp.Connection: it closes the child's stdin and waits
// for it to exit, sending SIGTERM after c.terminate and SIGKILL after as
// long again.
func (c *commandConn) Close() error {
	c.closeOnce.Do(func() { c.closeErr = c.end() })
	return c.closeErr
}

func (c *commandConn) end() error {
	if err := c.stdin.Close(); err != nil {
		return fmt.Errorf("closing stdin: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- c.cmd.Wait() }()
	wait := func() (error, bool) {
		t := time.NewTimer(c.terminate)
		defer t.Stop()
		select {
		case err := <-exited:
			return err, true
		case <-t.C:
			return nil, false
		}
	}
	if err, ok := wait(); ok {
		return err
	}
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err == nil {
		if err, ok := wait(); ok {
			return err
		}
	}
	if err := c.cmd.Process.Kill(); err != nil {
		return err
	}
	if err, ok := wait(); ok {
		return err
	}
	return errors.New("unresponsive subprocess")
}
