package backend

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
)

// The test binary doubles as a stdio MCP server (and as other helper
// processes) when ISOGATE_BACKEND_HELPER is set. This gives the stdio tests a
// real child process with controllable behaviour and no dependency on node.
const helperEnv = "ISOGATE_BACKEND_HELPER"

func TestMain(m *testing.M) {
	switch mode := os.Getenv(helperEnv); mode {
	case "":
		os.Exit(m.Run())
	case "serve":
		helperServe()
	case "sleep":
		helperSleep()
	case "gateway":
		helperGateway()
	default:
		fmt.Fprintf(os.Stderr, "unknown helper mode %q\n", mode)
		os.Exit(2)
	}
	os.Exit(0)
}

// helperInfo is returned by the helper server's "info" tool.
type helperInfo struct {
	PID       int      `json:"pid"`
	PPID      int      `json:"ppid"`
	Cwd       string   `json:"cwd"`
	Var       string   `json:"var"`       // ISOGATE_HELPER_VAR (set through Spec.Env)
	Inherited string   `json:"inherited"` // ISOGATE_INHERITED (set in the gateway's env)
	Env       []string `json:"env"`       // the whole environment
}

// helperServe runs an MCP server on stdin/stdout.
//
// Environment knobs: ISOGATE_HELPER_STDERR_LINES=n writes n numbered lines to
// stderr before serving; ISOGATE_HELPER_IGNORE_TERM=1 ignores SIGTERM (so
// shutdown must escalate to SIGKILL); ISOGATE_HELPER_IGNORE_EOF=1 keeps
// running after stdin is closed.
func helperServe() {
	if os.Getenv("ISOGATE_HELPER_IGNORE_TERM") == "1" {
		signal.Ignore(syscall.SIGTERM)
	}
	if n, _ := strconv.Atoi(os.Getenv("ISOGATE_HELPER_STDERR_LINES")); n > 0 {
		for i := 1; i <= n; i++ {
			fmt.Fprintf(os.Stderr, "line-%03d\n", i)
		}
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "helper", Version: "1"}, nil)
	type echoIn struct {
		Text string `json:"text"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return textResult(in.Text), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "info"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		wd, _ := os.Getwd()
		b, _ := json.Marshal(helperInfo{
			PID: os.Getpid(), PPID: os.Getppid(), Cwd: wd,
			Var: os.Getenv("ISOGATE_HELPER_VAR"), Inherited: os.Getenv("ISOGATE_INHERITED"), Env: os.Environ(),
		})
		return textResult(string(b)), nil, nil
	})
	type hugeIn struct {
		Bytes int `json:"bytes"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "huge"}, func(_ context.Context, _ *mcp.CallToolRequest, in hugeIn) (*mcp.CallToolResult, any, error) {
		return textResult(strings.Repeat("h", in.Bytes)), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "spawn"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		exe, err := os.Executable()
		if err != nil {
			return nil, nil, err
		}
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), helperEnv+"=sleep")
		if err := cmd.Start(); err != nil {
			return nil, nil, err
		}
		go func() { _ = cmd.Wait() }()
		return textResult(strconv.Itoa(cmd.Process.Pid)), nil, nil
	})
	_ = s.Run(context.Background(), &mcp.StdioTransport{})
	if os.Getenv("ISOGATE_HELPER_IGNORE_EOF") == "1" {
		time.Sleep(time.Hour) // outlive our stdin: only a signal ends us
	}
}

// helperSleep is a grandchild that ignores SIGTERM and never exits.
func helperSleep() {
	signal.Ignore(syscall.SIGTERM)
	time.Sleep(time.Hour)
}

// helperGateway runs a Manager with one stdio helper backend, prints the
// backend's pid and then waits to be killed.
func helperGateway() {
	exe, _ := os.Executable()
	m := NewManager(Options{
		Logger: slog.New(slog.DiscardHandler),
		Specs: []Spec{{Backend: config.Backend{
			Name: "child", Transport: config.TransportStdio, Command: exe,
			Env: map[string]string{helperEnv: "serve", "ISOGATE_HELPER_IGNORE_TERM": "1", "ISOGATE_HELPER_IGNORE_EOF": "1"},
		}}},
	})
	ctx := context.Background()
	if err := m.Start(ctx); err != nil {
		os.Exit(3)
	}
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := m.WaitHealthy(wctx); err != nil {
		fmt.Println("error:", err)
		os.Exit(4)
	}
	fmt.Println(m.Status()[0].PID)
	time.Sleep(time.Hour)
}

func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// resultText concatenates the text content of a tool result.
func resultText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if res == nil {
		t.Fatal("nil result")
	}
	var sb strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			sb.WriteString(tc.Text)
		}
	}
	return sb.String()
}

// helperSpec returns a spec running the test binary as a stdio MCP server.
func helperSpec(t *testing.T, name string, env map[string]string) Spec {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	e := map[string]string{helperEnv: "serve"}
	for k, v := range env {
		e[k] = v
	}
	return Spec{Backend: config.Backend{Name: name, Transport: config.TransportStdio, Command: exe, Env: e}}
}

// testLogger collects logs in memory and prints them if the test fails.
// (t.Log cannot be used: SDK goroutines may log after the test returns.)
func testLogger(t *testing.T) *slog.Logger {
	var mu sync.Mutex
	var buf bytes.Buffer
	t.Cleanup(func() {
		if t.Failed() {
			mu.Lock()
			defer mu.Unlock()
			t.Logf("logs:\n%s", buf.String())
		}
	})
	return slog.New(slog.NewTextHandler(lockedWriter{&mu, &buf}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type lockedWriter struct {
	mu  *sync.Mutex
	buf *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

// startManager creates and starts a manager and closes it at cleanup.
func startManager(t *testing.T, opts Options) *Manager {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = testLogger(t)
	}
	m := NewManager(opts)
	if err := m.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if err := m.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return m
}

func waitHealthy(t *testing.T, m *Manager, names ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := m.WaitHealthy(ctx, names...); err != nil {
		t.Fatalf("WaitHealthy: %v\nstatus: %+v", err, m.Status())
	}
}

// waitState waits until cond holds for the status of backend name,
// checking it again each time the backend's state changes (b.update
// closes b.changed), and fails the test after 20 s. Only what b.update
// changes is announced (state, last error, connection, tools); poll the
// counters and the stderr ring with testutil.Eventually.
func waitState(t *testing.T, m *Manager, name, what string, cond func(Status) bool) {
	t.Helper()
	b := m.current().backends[name]
	timeout := time.NewTimer(20 * time.Second)
	defer timeout.Stop()
	for {
		// Take the channel before reading the status: a change after the
		// read closes it, so none is missed.
		b.mu.Lock()
		changed := b.changed
		b.mu.Unlock()
		st := b.status()
		if cond(st) {
			return
		}
		select {
		case <-changed:
		case <-timeout.C:
			t.Fatalf("gave up after 20s waiting for %s; status %+v", what, st)
		}
	}
}

func statusOf(t *testing.T, m *Manager, name string) Status {
	t.Helper()
	for _, s := range m.Status() {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no status for %q", name)
	return Status{}
}

func toolNames(tools []*mcp.Tool) []string {
	var names []string
	for _, t := range tools {
		names = append(names, t.Name)
	}
	return names
}
