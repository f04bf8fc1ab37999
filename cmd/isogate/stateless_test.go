package main

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/resultstore/redistest"
)

// connectVersion connects a go-sdk client over streamable HTTP with a
// bearer token, asking for protocol version.
func connectVersion(t *testing.T, url, token, version string) *mcp.ClientSession {
	t.Helper()
	hc := &http.Client{Transport: bearer{token, http.DefaultTransport}}
	client := mcp.NewClient(&mcp.Implementation{Name: "replica-client"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connecting to %s with %s: %v", url, version, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func readText(cs *mcp.ClientSession, uri string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return "", err
	}
	return res.Contents[0].Text, nil
}

var resultURI = regexp.MustCompile(`isogate://result/[0-9a-f]{32}`)

// bigChain returns ~8 KB of JSON, more than sandbox.max_output_size, so
// the full output goes to the result store.
const bigChain = `return Array.from({length: 200}, (_, i) => ({i, s: "x".repeat(20) + i}))`

// TestStatelessReplicasOnRedis: two real isogate processes in stateless
// mode share one real redis-server. A go-sdk client negotiates 2026-07-28
// (an older one 2025-11-25); a result and a run record produced through
// replica A are read through replica B; A is killed and B keeps serving;
// Redis restarting gives a clear error, then recovery, never a crash.
func TestStatelessReplicasOnRedis(t *testing.T) {
	everythingServer(t)
	srv := redistest.ForTest(t)
	const token = "replica-secret"
	cfg := writeConfig(t, "")
	env := []string{"ISOGATE_SERVER__STATELESS=true", "ISOGATE_STORE__REDIS_URL=" + srv.URL(),
		"ISOGATE_SERVER__AUTH_TOKEN=" + token, "ISOGATE_SANDBOX__MAX_OUTPUT_SIZE=2000"}
	urlA, procA := startHTTPProcess(t, cfg, env...)
	urlB, _ := startHTTPProcess(t, cfg, env...)

	a := connectVersion(t, urlA, token, "2026-07-28")
	if v := a.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %q against stateless mode, want 2026-07-28", v)
	}
	b := connectVersion(t, urlB, token, "2025-11-25")
	if v := b.InitializeResult().ProtocolVersion; v != "2025-11-25" {
		t.Fatalf("an older client negotiated %q, want 2025-11-25", v)
	}
	if a.ID() != "" || b.ID() != "" {
		t.Errorf("stateless mode handed out session ids %q, %q", a.ID(), b.ID())
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := a.CallTool(ctx, &mcp.CallToolParams{Name: "call_tool_chain", Arguments: map[string]any{"code": bigChain}})
	if err != nil || res.IsError {
		t.Fatalf("call_tool_chain through A: %v %v", err, res)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	uri := resultURI.FindString(text)
	if uri == "" {
		t.Fatalf("no stored result in A's answer:\n%s", text)
	}
	runID, _ := res.Meta["isogate/run"].(string)
	if runID == "" {
		t.Fatalf("no run id in A's answer meta: %v", res.Meta)
	}

	full, err := readText(b, uri)
	if err != nil || !strings.Contains(full, `"s": "xxxxxxxxxxxxxxxxxxxx199"`) {
		t.Fatalf("reading A's result %s through B: %v\n%.300s", uri, err, full)
	}
	rec, err := readText(b, "isogate://runs/"+runID)
	if err != nil || !strings.Contains(rec, `"id": "`+runID+`"`) {
		t.Fatalf("reading A's run record through B: %v\n%.300s", err, rec)
	}

	// Replica A dies; B keeps serving its results and new calls.
	procA.Process.Kill()
	procA.Wait()
	if _, err := readText(b, uri); err != nil {
		t.Fatalf("B after A died: %v", err)
	}
	if out, isErr := callText(t, b, "call_tool_chain", map[string]any{"code": `return (await everything.get_sum({a: 40, b: 2}))`}); isErr || !strings.Contains(out, "42") {
		t.Fatalf("B's call after A died: %s", out)
	}

	// Redis goes away: results cannot be kept or read, and the answers say so.
	srv.Kill()
	out, _ := callText(t, b, "call_tool_chain", map[string]any{"code": bigChain})
	if !strings.Contains(out, "could not be kept: result store (redis") || !strings.Contains(out, "unavailable") {
		t.Errorf("with Redis down, the answer does not say the full output was not kept:\n%s", out)
	}
	if _, err := readText(b, uri); err == nil || !strings.Contains(err.Error(), "redis") {
		t.Errorf("reading with Redis down: err %v, want one naming Redis", err)
	}
	// Redis is back (empty): B recovers without a restart.
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	out, _ = callText(t, b, "call_tool_chain", map[string]any{"code": bigChain})
	uri = resultURI.FindString(out)
	if uri == "" {
		t.Fatalf("after Redis came back, no stored result:\n%s", out)
	}
	if _, err := readText(b, uri); err != nil {
		t.Fatalf("reading after Redis came back: %v", err)
	}
}
