package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"

	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/resultstore"
	"github.com/isogate/isogate/internal/resultstore/redistest"
)

func init() {
	RegisterSection(Section{Title: "What a run costs in the store (issue 44)", Name: "sizing", Order: 31, Run: sizingSection})
}

// sizingRecord is the run record of a one-call program as the gateway
// keeps it: the program, one call with its arguments and the backend's
// result (text and structuredContent, as the TypeScript SDK answers) and
// the program's result.
func sizingRecord(i int) *pipeline.RunRecord {
	structured := map[string]any{"key": fmt.Sprint("k-", i), "value": 42, "side_effect": true}
	text, _ := json.Marshal(structured)
	res, _ := json.Marshal(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}, StructuredContent: structured})
	return &pipeline.RunRecord{ID: fmt.Sprintf("%024x", i), Code: "const r = await counter.bump({key: 'k-" + strconv.Itoa(i) + "'});\nreturn r;",
		Tier: "simple", Started: time.Now(), DurationMS: 3, Outcome: pipeline.OutcomeOK, Console: []string{}, ResultBytes: len(text),
		Result: pipeline.NewBlob(text), Calls: []pipeline.CallRecord{{Seq: 1, Backend: "counter", Tool: "bump",
			Args: pipeline.NewBlob([]byte(fmt.Sprintf(`{"key":"k-%d"}`, i))), StartedMS: 1, DurationMS: 2, OK: true, Result: pipeline.NewBlob(res)}},
		Limits: &pipeline.RunLimits{TimeoutMS: 30000, HeapMB: 50, MaxResultBytes: 16 << 20}, Durability: "journalled"}
}

// sizingFailedRecord is the run record of a one-call program whose call
// failed (isError, with a short stack) and whose error the program let
// through: the tool's text is the call's error and part of the run's.
func sizingFailedRecord(i int) *pipeline.RunRecord {
	rec := sizingRecord(i)
	msg := fmt.Sprintf("counter k-%d is locked by another writer\n    at bump (counter.mjs:41:11)\n    at async handler (counter.mjs:12:5)", i)
	res, _ := json.Marshal(&mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}})
	rec.Outcome, rec.Result, rec.ResultBytes = pipeline.OutcomeError, pipeline.Blob{}, 0
	rec.Calls[0].OK, rec.Calls[0].Error, rec.Calls[0].Result = false, msg, pipeline.NewBlob(res)
	rec.Error = &pipeline.RunError{Code: "TOOL_ERROR", Message: "Error: counter.bump failed: " + msg + "\n    at <anonymous>:1:11"}
	return rec
}

// sizingLargeRecord is the run record of a program that returned about
// 100 KB of JSON, which output shaping stored whole (isogate://result/{id})
// and the record keeps cut to 64 KiB; output is that stored output (the
// value indented, as shaping stores it).
func sizingLargeRecord(i int) (rec *pipeline.RunRecord, output []byte) {
	rec = sizingRecord(i)
	var b strings.Builder
	b.WriteString("[")
	for j := range 1000 {
		if j > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"id":%d,"title":"Issue number %d of run %d","state":"open","labels":["bug","p2"]}`, j, j, i)
	}
	b.WriteString("]")
	var indented bytes.Buffer
	_ = json.Indent(&indented, []byte(b.String()), "", "  ")
	rec.Result, rec.ResultBytes, rec.ResultURI = pipeline.NewBlob([]byte(b.String())), b.Len(), "isogate://result/0123456789abcdef"
	return rec, indented.Bytes()
}

// stored is a record as the run store keeps it (pipeline.EncodeRecord).
func stored(rec *pipeline.RunRecord) []byte {
	data, _ := pipeline.EncodeRecord(rec, nil)
	return data
}

// storedWithOutput is a record as the run store keeps it, its stored
// output at hand.
func storedWithOutput(rec *pipeline.RunRecord, output []byte) []byte {
	data, _ := pipeline.EncodeRecord(rec, func(string) ([]byte, error) { return output, nil })
	return data
}

// plain is a record as the run store kept it before issue 44's stop 44
// (json.Marshal: every repeat kept).
func plain(rec *pipeline.RunRecord) []byte {
	data, _ := json.Marshal(rec)
	return data
}

// sizingSection puts n run records (and n task results of the same
// program) into the in-memory store and into a Redis store on a
// redis-server of its own, and reports the bytes each entry costs: what the
// memory store charges, and Redis's INFO memory used_memory delta per
// entry beside what the Redis store charges.
func sizingSection(ctx context.Context, cfg ReportConfig) (string, error) {
	n := 2000
	switch {
	case cfg.Smoke:
		n = 50
	case cfg.Quick:
		n = 500
	}
	srv, err := redistest.Start()
	if err != nil {
		return "", fmt.Errorf("redis-server: %w", err)
	}
	defer srv.Stop()
	client := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer client.Close()
	task := func(i int) []byte {
		out, _ := json.Marshal(map[string]any{"result": map[string]any{"content": []any{map[string]any{"type": "text", "text": fmt.Sprintf(`{"key":"k-%d","value":42}`, i)}}}})
		return out
	}
	kinds := []struct {
		name string
		data func(int) []byte
	}{
		{"run record (one call), stored whole as before stop 44", func(i int) []byte { return plain(sizingRecord(i)) }},
		{"run record (one call)", func(i int) []byte { return stored(sizingRecord(i)) }},
		{"run record (one failed call), stored whole as before stop 44", func(i int) []byte { return plain(sizingFailedRecord(i)) }},
		{"run record (one failed call)", func(i int) []byte { return stored(sizingFailedRecord(i)) }},
		{"run record (100 KB output stored), stored whole as before stop 44", func(i int) []byte { rec, _ := sizingLargeRecord(i); return plain(rec) }},
		{"run record (100 KB output stored)", func(i int) []byte { return storedWithOutput(sizingLargeRecord(i)) }},
		{"task result (one call)", task},
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d entries of each kind, 8 principals × 8 sessions, store.hmac_key set, redis-server 7 (jemalloc).\n\n", n)
	b.WriteString("| kind | data bytes | memory store charges | Redis used_memory per entry | Redis store charges |\n|---|--:|--:|--:|--:|\n")
	limits := resultstore.Limits{TTL: time.Hour, MaxBytes: 1 << 30}
	for ki, k := range kinds {
		mem := resultstore.NewMemory(limits)
		red, err := resultstore.NewRedis(resultstore.RedisOptions{URL: srv.URL(), Limits: limits,
			Prefix: fmt.Sprintf("%ssizing%d:", resultstore.RedisKeyPrefix, ki), HMACKey: []byte("sizing-hmac-key-0123")})
		if err != nil {
			return "", err
		}
		before, err := usedMemory(ctx, client)
		if err != nil {
			return "", err
		}
		data := 0
		for i := range n {
			owner := resultstore.OwnerKey(fmt.Sprintf("principal:user%d", i%8), fmt.Sprintf("%032x", i%64))
			d := k.data(i)
			data += len(d)
			if _, err := mem.Put(ctx, owner, d); err != nil {
				return "", err
			}
			if _, err := red.Put(ctx, owner, d); err != nil {
				return "", err
			}
		}
		after, err := usedMemory(ctx, client)
		if err != nil {
			return "", err
		}
		charged, err := red.Bytes(ctx)
		red.Close()
		if err != nil {
			return "", err
		}
		memCharged, _ := mem.Bytes("")
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d |\n", k.name, data/n, memCharged/n, (after-before)/int64(n), charged/int64(n))
	}
	return b.String(), nil
}

// usedMemory is redis-server's INFO memory used_memory.
func usedMemory(ctx context.Context, c *redis.Client) (int64, error) {
	info, err := c.Info(ctx, "memory").Result()
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("no used_memory in INFO memory")
}
