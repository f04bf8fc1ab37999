package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/codemode"
)

func init() {
	RegisterSection(Section{Title: "Code-mode dispatch tiers", Order: 10, Run: tiersSection})
	RegisterSection(Section{Title: "End-to-end call_tool_chain over stdio", Order: 11, Run: endToEndSection})
}

// toolCall returns a call of tool on cs, an error when it fails or its
// result is an error.
func toolCall(ctx context.Context, cs *mcp.ClientSession, tool string, args map[string]any) func() error {
	return func() error {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err == nil && res.IsError {
			err = fmt.Errorf("%s failed: %v", tool, res.Content)
		}
		return err
	}
}

// latency runs f n times, [SampleGap] apart, and returns its p50 and p99.
func latency(ctx context.Context, n int, f func() error) (p50, p99 time.Duration, err error) {
	samples := make([]time.Duration, 0, n)
	for range n {
		if err := pause(ctx, SampleGap); err != nil {
			return 0, 0, err
		}
		start := time.Now()
		if err := f(); err != nil {
			return 0, 0, err
		}
		samples = append(samples, time.Since(start))
	}
	slices.Sort(samples)
	return samples[len(samples)/2], samples[len(samples)*99/100], nil
}

func iterations(cfg ReportConfig) int {
	if cfg.Quick {
		return 100
	}
	return 500
}

type noopArgs struct {
	X int `json:"x"`
}

// inProcessBackend is a trivial go-sdk server reached in memory.
func inProcessBackend() backend.Spec {
	srv := mcp.NewServer(&mcp.Implementation{Name: "bench"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "noop", Description: "Returns at once."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in noopArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(`{"x":%d}`, in.X)}}}, nil, nil
		})
	return backend.InMemory("bench", srv)
}

// tiersSection compares the three call_tool_chain tiers with a direct
// backend call, on a trivial in-process tool, for each isolation mode.
func tiersSection(ctx context.Context, cfg ReportConfig) (string, error) {
	var b strings.Builder
	b.WriteString("One trivial tool call through `Engine.Execute`, against the same call made directly on the backend manager (the floor). In-process go-sdk backend, so the figures are the gateway's own overhead.\n\n")
	b.WriteString("| path | isolation | p50 | p99 | p50 ÷ direct |\n|---|---|---:|---:|---:|\n")
	for _, mode := range []config.Isolation{config.IsolationThread, config.IsolationProcess} {
		c := config.Default()
		c.Server.CacheDir = ""
		c.Sandbox.Isolation = mode
		c.RunCode.Enabled = false
		g, err := app.New(c, app.Options{ExtraSpecs: []backend.Spec{inProcessBackend()}})
		if err != nil {
			return "", err
		}
		g.Start(ctx)
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err = g.Backends.WaitHealthy(wctx)
		cancel()
		if err != nil {
			g.Close()
			return "", err
		}
		n := iterations(cfg)
		direct, _, err := latency(ctx, n, func() error {
			_, err := g.Backends.Call(ctx, "bench", &mcp.CallToolParams{Name: "noop", Arguments: map[string]any{"x": 1}})
			return err
		})
		if err != nil {
			g.Close()
			return "", err
		}
		if mode == config.IsolationThread {
			fmt.Fprintf(&b, "| direct backend call | — | %s | | ×1.00 |\n", fmtDur(direct))
		}
		for _, tier := range []struct{ name, code string }{
			{"tier 1: direct JSON", `{"tool": "bench.noop", "arguments": {"x": 1}}`},
			{"tier 2: simple call", `return await bench.noop({x: 1})`},
			{"tier 3: V8", `const r = await bench.noop({x: 1}); return r.x`},
		} {
			if mode == config.IsolationProcess && !strings.HasPrefix(tier.name, "tier 3") {
				continue // tiers 1-2 never reach the sandbox
			}
			p50, p99, err := latency(ctx, n, func() error {
				if r := g.Engine.Execute(ctx, codemode.Request{Code: tier.code}); r.IsError {
					return fmt.Errorf("%s: %s", tier.name, r.Text)
				}
				return nil
			})
			if err != nil {
				g.Close()
				return "", err
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | ×%.2f |\n", tier.name, mode, fmtDur(p50), fmtDur(p99), float64(p50)/float64(direct))
		}
		g.Close()
	}
	return b.String(), nil
}

// endToEndSection measures call_tool_chain through a real MCP client over
// stdio against `isogate serve` with the real server-everything, next to
// a direct client connection to server-everything and to the same echo
// through isogate's passthrough tool. Every path is sampled once per
// round, in turn, so that the ratios compare samples taken under the same
// load.
func endToEndSection(ctx context.Context, cfg ReportConfig) (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	everything, err := serverEverything(root)
	if err != nil {
		for _, path := range []string{"direct", "thread/tier 2", "thread/tier 3", "process/tier 2", "process/tier 3", "thread/passthrough", "process/passthrough"} {
			cfg.Figures.NotMeasured(figEcho(path), "server-everything not installed")
		}
		return err.Error() + "; skipped.\n", nil
	}
	dir, err := os.MkdirTemp("", "isogate-bench")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	bin, err := buildIsogate(ctx, root)
	if err != nil {
		return "", err
	}
	type path struct {
		figure, name string
		f            func() error
	}
	direct, err := connectStdio(ctx, exec.Command("node", everything, "stdio"))
	if err != nil {
		return "", err
	}
	defer direct.Close()
	paths := []path{{"direct", "direct `echo`", toolCall(ctx, direct, "echo", map[string]any{"message": "x"})}}
	for _, mode := range []string{"thread", "process"} {
		cs, err := startIsogate(ctx, bin, dir, everything, mode)
		if err != nil {
			return "", fmt.Errorf("isogate (%s): %w", mode, err)
		}
		defer cs.Close()
		echo, err := passthroughEcho(ctx, cs)
		if err != nil {
			return "", fmt.Errorf("isogate (%s): %w", mode, err)
		}
		paths = append(paths,
			path{mode + "/passthrough", fmt.Sprintf("isogate (%s): passthrough `%s`", mode, echo), toolCall(ctx, cs, echo, map[string]any{"message": "x"})},
			path{mode + "/tier 2", fmt.Sprintf("isogate (%s): tier 2 `return await everything.echo(...)`", mode),
				toolCall(ctx, cs, "call_tool_chain", map[string]any{"code": `return await everything.echo({message: "x"})`})},
			path{mode + "/tier 3", fmt.Sprintf("isogate (%s): tier 3 (V8) `const r = await everything.echo(...); return r.length`", mode),
				toolCall(ctx, cs, "call_tool_chain", map[string]any{"code": `const r = await everything.echo({message: "x"}); return r.length`})})
	}
	for range 10 { // warm: transform cache, worker contexts, each backend connection
		for _, p := range paths {
			if err := p.f(); err != nil {
				return "", fmt.Errorf("%s: %w", p.name, err)
			}
		}
	}
	n := iterations(cfg)
	samples := make([][]time.Duration, len(paths))
	for range n {
		for i, p := range paths {
			if err := pause(ctx, SampleGap); err != nil {
				return "", err
			}
			start := time.Now()
			if err := p.f(); err != nil {
				return "", fmt.Errorf("%s: %w", p.name, err)
			}
			samples[i] = append(samples[i], time.Since(start))
		}
	}
	var b strings.Builder
	b.WriteString("A go-sdk MCP client over stdio. Direct: the client talks to server-everything itself. Through isogate: the client talks to `isogate serve` (`server.expose: both`), which calls server-everything over stdio: its passthrough tool, and `call_tool_chain` in tier 2 and tier 3. " +
		"Every path is sampled once per round, in turn, " + fmt.Sprint(n) + " rounds: the ratios compare samples taken under the same load.\n\n")
	b.WriteString("| path | p50 | p99 | p50 ÷ direct | p50 − direct |\n|---|---:|---:|---:|---:|\n")
	var d50 time.Duration
	for i, p := range paths {
		s := samples[i]
		slices.Sort(s)
		p50, p99 := s[len(s)/2], s[len(s)*99/100]
		if i == 0 {
			d50 = p50
		}
		cfg.Figures.SetDuration(figEcho(p.figure), p50)
		fmt.Fprintf(&b, "| %s | %s | %s | ×%.2f | %s |\n", p.name, fmtDur(p50), fmtDur(p99), float64(p50)/float64(d50), fmtDur(p50-d50))
	}
	return b.String(), nil
}

// passthroughEcho is the name under which isogate lists server-everything's
// echo as a passthrough tool.
func passthroughEcho(ctx context.Context, cs *mcp.ClientSession) (string, error) {
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return "", err
		}
		if strings.HasSuffix(tool.Name, "echo") {
			return tool.Name, nil
		}
	}
	return "", errors.New("no passthrough echo tool listed (server.expose: both)")
}

// serverEverything is the path of the installed server-everything, or an
// error saying how to install it.
func serverEverything(root string) (string, error) {
	path := filepath.Join(root, "examples/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	if _, err := os.Stat(path); err != nil {
		return "", errors.New("server-everything is not installed (run `make deps`)")
	}
	return path, nil
}

// startIsogate serves call_tool_chain over stdio with server-everything as
// backend `everything` in the given isolation mode, and waits until a
// program reaches it.
func startIsogate(ctx context.Context, bin, dir, everything, mode string) (*mcp.ClientSession, error) {
	cs, _, err := startIsogateEnv(ctx, bin, dir, everything, mode, nil)
	return cs, err
}

// startIsogateEnv is startIsogate with extra environment variables for the
// gateway's process; it also returns the process id.
func startIsogateEnv(ctx context.Context, bin, dir, everything, mode string, env []string) (*mcp.ClientSession, int, error) {
	cfgPath := filepath.Join(dir, "isogate-"+mode+".yaml")
	yaml := fmt.Sprintf("server:\n  cache_dir: %s\n  log_level: error\n  expose: both\nbackends:\n  everything:\n    command: node\n    args: [%q, stdio]\nsandbox:\n  trusted_code: true\n  isolation: %s\n",
		filepath.Join(dir, "cache-"+mode), everything, mode)
	if err := os.WriteFile(cfgPath, []byte(yaml), 0o600); err != nil {
		return nil, 0, err
	}
	cmd := exec.Command(bin, "serve", "--config", cfgPath)
	cmd.Env = append(os.Environ(), env...)
	cs, err := connectStdio(ctx, cmd)
	if err != nil {
		return nil, 0, err
	}
	// A program waits for a starting backend (bounded by its deadline).
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "call_tool_chain",
		Arguments: map[string]any{"code": `return await everything.echo({message: "warm"})`, "timeout": 30000}})
	if err == nil && res.IsError {
		err = fmt.Errorf("warm-up call failed: %v", res.Content)
	}
	if err != nil {
		cs.Close()
		return nil, 0, err
	}
	return cs, cmd.Process.Pid, nil
}

// connectStdio starts cmd and connects a go-sdk client to it.
func connectStdio(ctx context.Context, cmd *exec.Cmd) (*mcp.ClientSession, error) {
	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	return mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(cctx, &mcp.CommandTransport{Command: cmd}, nil)
}

// moduleRoot finds the root of the repository: the nearest directory at or
// above the working directory whose go.mod declares the module
// github.com/isogate/isogate (bench/go.mod, the bench module's own, is
// passed over).
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && declaresModule(data, "github.com/isogate/isogate") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("the go.mod of github.com/isogate/isogate is not found above the working directory")
		}
		dir = parent
	}
}

// declaresModule reports whether the go.mod content gomod declares module path.
func declaresModule(gomod []byte, path string) bool {
	for line := range strings.Lines(string(gomod)) {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`) == path
		}
	}
	return false
}

func fmtDur(d time.Duration) string {
	switch {
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
	}
}

// buildSDKProxy builds the bare go-sdk proxy (./cmd/sdkproxy of this
// module) into dir.
func buildSDKProxy(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "sdkproxy")
	if err := goBuild(ctx, "", "./cmd/sdkproxy", bin); err != nil {
		return "", err
	}
	return bin, nil
}
