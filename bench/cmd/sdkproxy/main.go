// Command sdkproxy is the floor a Go MCP gateway stands on: a go-sdk server
// on stdio offering the tools of one stdio backend (a go-sdk client to a
// command), each call forwarded as it came, with the go-sdk's own stdio
// transport on both ends. It has nothing of isogate's: no policy, records,
// sessions, tasks or catalogue. BenchmarkEchoStdio samples it beside
// isogate's passthrough, so "passthrough minus proxy" is what isogate's
// own work costs over the SDK's.
//
// With -lean both ends are isogate's own stdio connections
// (internal/jsonrpcio, stdin read through Go's poller), as in isogate
// serve, so that "passthrough minus lean proxy" leaves out the transports
// and is isogate's work over the SDK's server and client alone.
//
// With -relay it is the floor below that: bytes copied from stdin to the
// backend's stdin and from its stdout to stdout, nothing parsed, so that
// "relay minus direct" is what the two extra process hops cost alone.
//
//	sdkproxy [-lean|-relay] node .../server-everything/dist/index.js stdio
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/jsonrpcio"
)

func main() {
	if err := run(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "sdkproxy:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	mode := ""
	if len(args) > 0 && (args[0] == "-relay" || args[0] == "-lean") {
		mode, args = args[0], args[1:]
	}
	if len(args) == 0 {
		return fmt.Errorf("usage: sdkproxy [-lean|-relay] COMMAND [ARG...]")
	}
	backend := exec.Command(args[0], args[1:]...)
	backend.Stderr = os.Stderr
	if mode == "-relay" {
		return relay(backend)
	}
	var toClient, toBackend mcp.Transport = &mcp.StdioTransport{}, &mcp.CommandTransport{Command: backend}
	if mode == "-lean" {
		var err error
		if toClient, toBackend, err = leanTransports(backend); err != nil {
			return err
		}
	}
	impl := &mcp.Implementation{Name: "sdkproxy", Version: "1"}
	cs, err := mcp.NewClient(impl, nil).Connect(ctx, toBackend, nil)
	if err != nil {
		return fmt.Errorf("connecting to the backend: %w", err)
	}
	defer cs.Close()
	server := mcp.NewServer(impl, nil)
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("listing the backend's tools: %w", err)
		}
		server.AddTool(tool, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return cs.CallTool(ctx, &mcp.CallToolParams{Name: req.Params.Name, Arguments: req.Params.Arguments})
		})
	}
	return server.Run(ctx, toClient)
}

// leanTransports are isogate's stdio connections: stdin (a pipe) opened
// anew in Go's poller and the backend's pipes, each a jsonrpcio.Conn.
func leanTransports(backend *exec.Cmd) (toClient, toBackend mcp.Transport, err error) {
	in, err := os.OpenFile("/proc/self/fd/0", os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("stdin: %w", err)
	}
	out, err := backend.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	bin, err := backend.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := backend.Start(); err != nil {
		return nil, nil, err
	}
	toClient = conn{jsonrpcio.NewConn(in, os.Stdout, mcp.DefaultMaxLineLength, in.Close)}
	toBackend = conn{jsonrpcio.NewConn(out, bin, mcp.DefaultMaxLineLength, bin.Close)}
	return toClient, toBackend, nil
}

// conn is a transport whose one connection already exists.
type conn struct{ c mcp.Connection }

// Connect implements mcp.Transport.
func (t conn) Connect(context.Context) (mcp.Connection, error) { return t.c, nil }

// relay runs the backend and copies bytes between it and this process's
// stdin and stdout until the backend's output ends.
func relay(cmd *exec.Cmd) error {
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() {
		io.Copy(in, os.Stdin)
		in.Close()
	}()
	if _, err := io.Copy(os.Stdout, out); err != nil {
		return err
	}
	return cmd.Wait()
}
