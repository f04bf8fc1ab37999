package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"runtime"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/backend"
)

// soakGatewayArg is the first argument that makes a binary calling
// [ServeWorkerIfRequested] serve a gateway for the soak over HTTP (the
// second names the isolation mode): it prints its base URL on stdout and
// serves until its stdin closes. Beside /mcp it serves /debug/pprof/ and
// /debug/memstats (runtime.MemStats as JSON), for the soak only.
const soakGatewayArg = "soak-gateway"

// soakBigBytes is the size of the soak backend's `big` result: over
// sandbox.output.chunk_threshold, so that its runs fill the result store.
const soakBigBytes = 12 << 10

func runSoakGatewayIfRequested() {
	if len(os.Args) < 2 || os.Args[1] != soakGatewayArg {
		return
	}
	mode := config.IsolationProcess
	if len(os.Args) > 2 {
		mode = config.Isolation(os.Args[2])
	}
	if err := serveSoakGateway(mode); err != nil {
		fmt.Fprintln(os.Stderr, "soak-gateway:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// serveSoakGateway serves the soak's gateway (defaults, but for the
// isolation mode and an in-process backend `srv`) until stdin closes.
func serveSoakGateway(mode config.Isolation) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := config.Default()
	c.Server.CacheDir = ""
	c.Server.LogLevel = "error"
	c.Sandbox.Isolation = mode
	c.Sandbox.TrustedCode = mode == config.IsolationThread
	c.RunCode.Enabled = false
	// The soak's 64 clients are one operator's: no per-principal cap.
	c.Sandbox.MaxConcurrentPerPrincipal = c.Sandbox.MaxConcurrent
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	g, err := app.New(c, app.Options{ExtraSpecs: []backend.Spec{soakBackend()}, Logger: logger})
	if err != nil {
		return err
	}
	defer g.Close()
	g.Start(ctx)
	if err := g.Backends.WaitHealthy(ctx); err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/", g.Surface.HTTPHandler())
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/memstats", func(w http.ResponseWriter, _ *http.Request) {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		_ = json.NewEncoder(w).Encode(ms)
	})
	mux.HandleFunc("/debug/gc", func(w http.ResponseWriter, _ *http.Request) {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		_ = json.NewEncoder(w).Encode(ms)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	defer srv.Close()
	fmt.Printf("http://%s\n", ln.Addr())
	// Serve until the parent closes stdin (or dies).
	_, _ = bufio.NewReader(os.Stdin).ReadString(0)
	return nil
}

// soakBackend serves `echo` (its arguments back) and `big` (soakBigBytes of
// JSON).
func soakBackend() backend.Spec {
	big := `{"rows":[` + strings.Repeat(`{"id":1,"name":"row","ok":true},`, soakBigBytes/32) + `{"id":0}]}`
	srv := mcp.NewServer(&mcp.Implementation{Name: "srv"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Returns its arguments."},
		func(_ context.Context, _ *mcp.CallToolRequest, in map[string]any) (*mcp.CallToolResult, any, error) {
			b, _ := json.Marshal(in)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "big", Description: "About 12 kB of JSON rows."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: big}}}, nil, nil
		})
	return backend.InMemory("srv", srv)
}
