package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/pipeline"
)

// TestTypeScriptSDKRunRecordsStoredWithoutRepeats: the run records of
// calls to a backend on the official TypeScript SDK's server (indented
// text beside structuredContent; an isError stack the run's error quotes)
// read back through isogate://runs/{id} exactly as the gateway wrote them
// to server.record_dir, and the store's encoding of those records, the
// SDK's bytes as the gateway received them, leaves the repeats out and is
// smaller.
func TestTypeScriptSDKRunRecordsStoredWithoutRepeats(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	records := filepath.Join(dir, "records")
	cfg := fmt.Sprintf(`backends:
  counter:
    command: node
    args: [%q]
server:
  record_dir: %q
`, filepath.Join(repoRoot, "interop", "testdata", "structured_backend.mjs"), records)
	file := filepath.Join(dir, "isogate.yaml")
	if err := os.WriteFile(file, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "serve", "--config", file)
	cmd.Env = gatewayEnv()
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "records-test"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for _, c := range []struct {
		name, code string
		gone       []string
	}{
		{"structured", "const r = await counter.stat({key: 'k-1'}); return {value: r.value};", []string{`"structuredContent"`}},
		{"failed", "return await counter.fail({key: 'k-1'});", []string{`"error":"Error: counter k-1 is locked`, "failed: Error: counter k-1"}},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "call_tool_chain", Arguments: map[string]any{"code": c.code}})
		if err != nil {
			t.Fatal(err)
		}
		id, _ := res.Meta["isogate/run"].(string)
		if id == "" {
			t.Fatalf("%s: no run record: %+v", c.name, res)
		}
		rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "isogate://runs/" + id})
		if err != nil {
			t.Fatal(err)
		}
		shown := rr.Contents[0].Text
		written, err := os.ReadFile(filepath.Join(records, id+".json"))
		if err != nil || strings.TrimSpace(string(written)) != shown {
			t.Fatalf("%s: isogate://runs/%s differs from record_dir (%v):\n%s\nwant:\n%s", c.name, id, err, shown, written)
		}
		var rec pipeline.RunRecord
		if err := json.Unmarshal([]byte(shown), &rec); err != nil || len(rec.Calls) != 1 {
			t.Fatalf("%s: %v: %s", c.name, err, shown)
		}
		plain, _ := json.Marshal(&rec)
		stored, err := pipeline.EncodeRecord(&rec, nil)
		if err != nil || !pipeline.IsCompactRecord(stored) || len(stored) >= len(plain) {
			t.Errorf("%s: stored %d bytes for %d (%v):\n%s", c.name, len(stored), len(plain), err, stored)
		}
		for _, g := range c.gone {
			if !strings.Contains(string(plain), g) || strings.Contains(string(stored), g) {
				t.Errorf("%s: %s is in the record and should be left out of the stored one:\n%s", c.name, g, stored)
			}
		}
		t.Logf("%s: %d bytes stored for %d", c.name, len(stored), len(plain))
	}
}
