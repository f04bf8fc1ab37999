package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/resultstore/redistest"
)

// principalsConfig writes a gateway config with the real server-everything
// and alice and bob as static-token principals.
func principalsConfig(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	cfg := fmt.Sprintf(`server:
  cache_dir: %s
  auth:
    mode: token
    tokens:
      alice: {token: "alice-replica-token"}
      bob: {token: "bob-replica-token"}
backends:
  everything:
    command: node
    args: [%q, stdio]
sandbox:
  isolation: thread
  trusted_code: true
  timeout: 10s
  max_output_size: 2000
`, filepath.Join(dir, "cache"), everythingServer(t))
	path := filepath.Join(dir, "isogate.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// readAnswer reads uri through cs: its text, or the error with ids
// replaced by ID, so that answers for different ids compare.
func readAnswer(cs *mcp.ClientSession, uri string, ids ...string) string {
	text, err := readText(cs, uri)
	answer := "read: " + text
	if err != nil {
		answer = "error: " + err.Error()
	}
	for _, id := range ids {
		answer = strings.ReplaceAll(answer, id, "ID")
	}
	return answer
}

// TestSessionReplicasOnRedisKeepWhatAPrincipalMade: two real isogate
// processes in session mode share one real redis-server. alice runs a
// program through replica A that stores its full output, ends her session,
// and connects to replica B (a reconnect that lands elsewhere): her new
// session reads the result and the run record. bob, connected to B with
// his own token, gets for each exactly what an id naming nothing gets.
func TestSessionReplicasOnRedisKeepWhatAPrincipalMade(t *testing.T) {
	srv := redistest.ForTest(t)
	cfg := principalsConfig(t)
	env := []string{"ISOGATE_STORE__REDIS_URL=" + srv.URL()}
	urlA, _ := startHTTPProcess(t, cfg, env...)
	urlB, _ := startHTTPProcess(t, cfg, env...)

	first := connectVersion(t, urlA, "alice-replica-token", "2025-11-25")
	if first.ID() == "" {
		t.Fatal("replica A handed out no session id: not in session mode")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := first.CallTool(ctx, &mcp.CallToolParams{Name: "call_tool_chain", Arguments: map[string]any{"code": bigChain}})
	if err != nil || res.IsError {
		t.Fatalf("call_tool_chain through A: %v %v", err, res)
	}
	uri := resultURI.FindString(res.Content[0].(*mcp.TextContent).Text)
	runID, _ := res.Meta["isogate/run"].(string)
	if uri == "" || runID == "" {
		t.Fatalf("no stored result or run id in A's answer: %v", res)
	}
	if err := first.Close(); err != nil {
		t.Fatalf("ending alice's first session: %v", err)
	}

	again := connectVersion(t, urlB, "alice-replica-token", "2025-11-25")
	if got := readAnswer(again, uri); !strings.Contains(got, `"s": "xxxxxxxxxxxxxxxxxxxx199"`) {
		t.Errorf("alice's new session on B reading her result: %.300s", got)
	}
	if got := readAnswer(again, "isogate://runs/"+runID); !strings.Contains(got, `"id": "`+runID+`"`) {
		t.Errorf("alice's new session on B reading her run record: %.300s", got)
	}

	bob := connectVersion(t, urlB, "bob-replica-token", "2025-11-25")
	resID := strings.TrimPrefix(uri, "isogate://result/")
	otherRes, otherRun := flipLast(resID), flipLast(runID)
	for what, pair := range map[string][2]string{
		"result":      {uri, "isogate://result/" + otherRes},
		"result part": {uri + "/0/s", "isogate://result/" + otherRes + "/0/s"},
		"run record":  {"isogate://runs/" + runID, "isogate://runs/" + otherRun},
	} {
		got := readAnswer(bob, pair[0], resID, runID)
		want := readAnswer(bob, pair[1], otherRes, otherRun)
		if got != want || !strings.HasPrefix(got, "error: ") {
			t.Errorf("bob reading alice's %s: %.200q, want what an id naming nothing gets: %q", what, got, want)
		}
	}
}

// flipLast changes the last hex digit of id.
func flipLast(id string) string {
	if strings.HasSuffix(id, "0") {
		return id[:len(id)-1] + "1"
	}
	return id[:len(id)-1] + "0"
}
