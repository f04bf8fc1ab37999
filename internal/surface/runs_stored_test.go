package surface

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/resultstore"
	"github.com/isogate/isogate/internal/resultstore/redistest"
)

// preStop44Record is a run record as isogate stored it in Redis before
// stop 44: plain JSON, the backend's text repeating its structuredContent
// and the program's result repeating both.
const preStop44Record = `{"id":"000000000000000000000007","code":"const r = await counter.bump({key: 'k-7'});\nreturn r;","tier":"simple","started":"2026-11-29T04:05:20.528900094Z","duration_ms":3,"outcome":"ok","console":[],"result_bytes":43,"result":{"key":"k-7","side_effect":true,"value":42},"calls":[{"seq":1,"backend":"counter","tool":"bump","args":{"key":"k-7"},"started_ms":1,"duration_ms":2,"ok":true,"result":{"content":[{"type":"text","text":"{\"key\":\"k-7\",\"side_effect\":true,\"value\":42}"}],"structuredContent":{"key":"k-7","side_effect":true,"value":42}}}],"limits":{"timeout_ms":30000,"heap_mb":50,"max_result_bytes":16777216},"durability":"journalled"}`

// On a real redis-server shared as replicas share it: a record stored by
// the previous version still reads as it was stored; a record stored now
// holds fewer bytes in Redis than its JSON (its repeats left out) and
// reads back, through isogate://runs/{id}'s reader and in
// server.record_dir, exactly as its whole JSON, indented.
func TestRunRecordsStoredWithoutRepeatsOnRedis(t *testing.T) {
	ctx := context.Background()
	srv := redistest.ForTest(t)
	store, err := resultstore.NewRedis(resultstore.RedisOptions{URL: srv.URL(), Limits: resultstore.Limits{TTL: time.Hour, MaxBytes: 1 << 20},
		Prefix: resultstore.RedisKeyPrefix + "runs:", HMACKey: []byte("runs-test-hmac-key-0123")})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	dir := t.TempDir()
	runs := newRunStore(store, dir)
	owner := resultstore.OwnerKey("principal:alice", "")

	// What the previous version wrote (its runStore.put: PutID of the JSON).
	if err := store.PutID(ctx, owner, "000000000000000000000007", []byte(preStop44Record)); err != nil {
		t.Fatal(err)
	}
	want := indented([]byte(preStop44Record))
	if got, ok := runs.get(ctx, owner, "000000000000000000000007"); !ok || got != string(want) {
		t.Fatalf("the pre-44 record reads back (%v):\n%s\nwant:\n%s", ok, got, want)
	}

	structured := map[string]any{"key": "k-8", "value": 42, "side_effect": true}
	text, _ := json.Marshal(structured)
	res, _ := json.Marshal(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}, StructuredContent: structured})
	rec := &pipeline.RunRecord{ID: "000000000000000000000008", Code: "const r = await counter.bump({key: 'k-8'});\nreturn r;", Tier: "simple",
		Started: time.Now(), DurationMS: 3, Outcome: pipeline.OutcomeOK, Console: []string{}, ResultBytes: len(text), Result: pipeline.NewBlob(text),
		Calls: []pipeline.CallRecord{{Seq: 1, Backend: "counter", Tool: "bump", Args: pipeline.NewBlob([]byte(`{"key":"k-8"}`)), OK: true, Result: pipeline.NewBlob(res)}}}
	if err := runs.put(ctx, owner, rec, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	plain, _ := json.Marshal(rec)
	held, err := store.Get(ctx, owner, rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(held) >= len(plain) {
		t.Errorf("Redis holds %d bytes for a record of %d", len(held), len(plain))
	}
	t.Logf("Redis holds %d bytes for a record of %d", len(held), len(plain))
	want, _ = json.MarshalIndent(rec, "", "  ")
	if got, ok := runs.get(ctx, owner, rec.ID); !ok || got != string(want) {
		t.Errorf("the record reads back (%v):\n%s\nwant:\n%s", ok, got, want)
	}
	if file, err := os.ReadFile(filepath.Join(dir, rec.ID+".json")); err != nil || string(file) != string(want)+"\n" {
		t.Errorf("record_dir holds (%v):\n%s\nwant:\n%s", err, file, want)
	}
}
