package surface

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
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

// A record whose run's full output was stored (isogate://result/{id})
// refers to it instead of copying it, and reads back whole; once the
// output is no longer kept, the record still reads, without its result.
func TestRunRecordRefersToItsStoredOutput(t *testing.T) {
	ctx := context.Background()
	limits := resultstore.Limits{TTL: time.Hour, MaxBytes: 1 << 20}
	records, outputs := resultstore.NewMemory(limits), resultstore.NewMemory(limits)
	runs := newRunStore(records, "").withOutputs(outputs)
	owner := resultstore.OwnerKey("principal:alice", "")
	value := `{"items":[` + strings.Repeat(`{"title":"an issue","state":"open"},`, 200) + `{}]}`
	var rendered bytes.Buffer
	_ = json.Indent(&rendered, []byte(value), "", "  ")
	id, err := outputs.Put(ctx, owner, rendered.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	rec := &pipeline.RunRecord{ID: "run-1", Code: "return big", Outcome: pipeline.OutcomeOK, Console: []string{}, ResultBytes: len(value),
		Result: pipeline.NewBlob([]byte(value)), ResultURI: resultstore.URI(id, ""), Calls: []pipeline.CallRecord{}}
	if err := runs.put(ctx, owner, rec, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	held, _ := records.Bytes(owner)
	if held >= len(value) {
		t.Errorf("the store holds %d bytes for a record whose result alone is %d", held, len(value))
	}
	want, _ := json.MarshalIndent(rec, "", "  ")
	if got, ok := runs.get(ctx, owner, "run-1"); !ok || got != string(want) {
		t.Errorf("the record reads back (%v):\n%.400s\nwant:\n%.400s", ok, got, want)
	}
	expired := newRunStore(records, "").withOutputs(resultstore.NewMemory(limits))
	expired.index = runs.index
	got, ok := expired.get(ctx, owner, "run-1")
	if !ok || strings.Contains(got, `"result":`) || !strings.Contains(got, `"result_uri": "isogate://result/`) {
		t.Errorf("with its output gone the record reads (%v):\n%s", ok, got)
	}
}
