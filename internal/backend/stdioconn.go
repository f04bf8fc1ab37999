package backend

import (
	"errors"
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/jsonrpcio"
)

// maxStdioFrame bounds one message from a stdio backend, as the go-sdk's
// stdio transports do (mcp.DefaultMaxLineLength).
const maxStdioFrame = mcp.DefaultMaxLineLength

// commandConn is the connection to a stdio backend: newline-delimited
// JSON-RPC on the child's stdin and stdout (a jsonrpcio.Conn). It replaces
// the go-sdk's CommandTransport connection, whose reader goroutine hands
// every message over a channel and whose decoder allocates 32 KB per
// message (internal/jsonrpcio says more): Read reads in the caller's
// goroutine. Close ends the child as the go-sdk does (and as the MCP
// specification asks): stdin closed, then SIGTERM after terminate, then
// SIGKILL; a Read blocked meanwhile ends when the child's stdout does.
type commandConn struct {
	*jsonrpcio.Conn
	cmd       *exec.Cmd
	stdin     io.WriteCloser
	terminate time.Duration
	reaped    func() // called once the child has been waited for (nil: nothing to tell)
}

// startCommand starts cmd with pipes on its stdin and stdout and returns
// the connection over them; reaped (if not nil) is called once the child
// has exited and been waited for.
func startCommand(cmd *exec.Cmd, terminate time.Duration, reaped func()) (*commandConn, error) {
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
	c := &commandConn{cmd: cmd, stdin: stdin, terminate: terminate, reaped: reaped}
	c.Conn = jsonrpcio.NewConn(stdout, stdin, maxStdioFrame, c.end)
	return c, nil
}

// end closes the child's stdin and waits for it to exit, sending SIGTERM
// after c.terminate and SIGKILL after as long again.
func (c *commandConn) end() error {
	if err := c.stdin.Close(); err != nil {
		return fmt.Errorf("closing stdin: %w", err)
	}
	exited := make(chan error, 1)
	go func() {
		err := c.cmd.Wait()
		if c.reaped != nil {
			c.reaped()
		}
		exited <- err
	}()
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
