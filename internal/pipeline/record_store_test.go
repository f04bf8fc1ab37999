package pipeline

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// recordedCall records one call answered with res through RecordStage, as
// a run does.
func recordedCall(t *testing.T, tool string, res *mcp.CallToolResult) CallRecord {
	t.Helper()
	p := New(Options{Backend: CallerFunc(func(context.Context, *Call) (*mcp.CallToolResult, error) { return res, nil })})
	run := NewRun(0)
	_, _ = p.Call(WithRun(context.Background(), run), &Call{Backend: "srv", Tool: tool, Args: json.RawMessage(`{"id":"k-1"}`)})
	calls := run.Calls()
	if len(calls) != 1 {
		t.Fatalf("%d calls recorded", len(calls))
	}
	return calls[0]
}

// A stored record leaves out what one part repeats of another and reads
// back as the same JSON, byte for byte: a Go SDK backend's text that is
// its structuredContent, a TypeScript backend's indented text whose
// structuredContent is its JSON re-encoded, a tool error that is its
// result's text, the run's error message quoting it, and a program's
// result that is a call's structuredContent. A result whose text is not
// its structuredContent keeps both.
func TestEncodedRecordLeavesOutRepeatsAndReadsBackTheSame(t *testing.T) {
	structured := map[string]any{"key": "k-1", "value": 42, "note": "<&>\u2028", "side_effect": true}
	goText, _ := json.Marshal(structured)
	// What JSON.stringify(out, null, 2) writes: insertion order, indented.
	tsText := "{\n  \"value\": 42,\n  \"key\": \"k-1\",\n  \"note\": \"<&>\u2028\",\n  \"side_effect\": true\n}"
	stack := "ECONNREFUSED 10.0.0.7:5432: the database did not answer\n    at connect (db.js:12:5)\n    at query (db.js:40:3)"
	goSDK := recordedCall(t, "bump", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(goText)}}, StructuredContent: structured})
	tsSDK := recordedCall(t, "bump", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: tsText}}, StructuredContent: structured})
	failed := recordedCall(t, "query", &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: stack}}})
	other := recordedCall(t, "bump", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "bumped k-1"},
		&mcp.TextContent{Text: `{"key":"k-1","value":41}`}}, StructuredContent: structured})
	if failed.Error != stack {
		t.Fatalf("the failed call's error is %q", failed.Error)
	}
	base := RunRecord{ID: "0123456789abcdef01234567", Code: "const r = await srv.bump({id: 'k-1'});\nreturn r;", Tier: "v8",
		Started: time.Date(2026, 11, 29, 4, 0, 0, 0, time.UTC), DurationMS: 3, Outcome: OutcomeOK, Console: []string{"a line"},
		Limits: &RunLimits{TimeoutMS: 30000}}
	withCalls := func(result json.RawMessage, calls ...CallRecord) *RunRecord {
		rec := base
		rec.Calls = calls
		if result != nil {
			rec.Result, rec.ResultBytes = NewBlob(result), len(result)
		}
		return &rec
	}
	failedRun := withCalls(nil, goSDK, failed)
	failedRun.Outcome, failedRun.Error = OutcomeError, &RunError{Code: "TOOL_ERROR", Message: "Error: srv.query failed: " + stack + "\n\nHint: read isogate://backend/srv"}
	cases := []struct {
		name  string
		rec   *RunRecord
		gone  []string // what the stored form no longer holds
		plain bool     // nothing repeats: stored as json.Marshal writes it
	}{
		{"go sdk, result is the call's", withCalls(goText, goSDK), []string{`"text":`, `"result":{"key"`}, false},
		{"typescript sdk", withCalls(json.RawMessage(`{"sum":1}`), tsSDK), []string{`"structuredContent"`}, false},
		{"tool error quoted by the run's error", failedRun, []string{`"error":"ECONNREFUSED`, "failed: ECONNREFUSED"}, false},
		{"text is not the structured content", withCalls(json.RawMessage(`{"sum":1}`), other), nil, true},
	}
	for _, c := range cases {
		plain, _ := json.Marshal(c.rec)
		stored, err := EncodeRecord(c.rec, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if c.plain != !IsCompactRecord(stored) || (c.plain && string(stored) != string(plain)) {
			t.Errorf("%s: stored compact %v, want %v:\n%s", c.name, IsCompactRecord(stored), !c.plain, stored)
		}
		if !c.plain && len(stored) >= len(plain) {
			t.Errorf("%s: stored %d bytes, not fewer than the %d of the plain record", c.name, len(stored), len(plain))
		}
		for _, g := range c.gone {
			if strings.Contains(string(stored), g) {
				t.Errorf("%s: the stored record still holds %s:\n%s", c.name, g, stored)
			}
		}
		back, err := DecodeRecord(stored, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if again, _ := json.Marshal(back); string(again) != string(plain) {
			t.Errorf("%s: read back\n%s\nwant\n%s", c.name, again, plain)
		}
		t.Logf("%s: %d bytes stored for %d plain", c.name, len(stored), len(plain))
	}
}

// oldRecord is a run record as the version before stop 44 stored it
// (plain json.Marshal of the record, every text kept where it was).
const oldRecord = `{"id":"5d241b685408199be25e9660","code":"const x = await everything.fail({}); return x","tier":"simple","started":"2026-11-29T04:07:37.543046953Z","duration_ms":1,"outcome":"error","error":{"code":"TOOL_ERROR","message":"Error: everything.fail failed: quota exceeded for this principal today"},"console":[],"result_bytes":0,"calls":[{"seq":1,"backend":"everything","tool":"fail","args":{},"started_ms":0,"duration_ms":1,"ok":false,"error":"quota exceeded for this principal today","result":{"content":[{"type":"text","text":"quota exceeded for this principal today"}],"isError":true}},{"seq":2,"backend":"everything","tool":"add","args":{"a":1,"b":2},"started_ms":0,"duration_ms":1,"ok":true,"result":{"content":[{"type":"text","text":"{\"sum\":3}"}],"structuredContent":{"sum":3}}}],"limits":{"timeout_ms":30000,"heap_mb":50,"max_result_bytes":16777216}}`

// A record stored by the previous version (every repeat kept) still
// reads, as it was written.
func TestDecodeRecordReadsTheOlderForm(t *testing.T) {
	if IsCompactRecord([]byte(oldRecord)) {
		t.Fatal("an old record is taken for a compact one")
	}
	rec, err := DecodeRecord([]byte(oldRecord), nil)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := json.Marshal(rec); string(again) != oldRecord {
		t.Errorf("read back\n%s\nwant\n%s", again, oldRecord)
	}
	if len(rec.Calls) != 2 || rec.Calls[0].Error != "quota exceeded for this principal today" || rec.Error.Message != "Error: everything.fail failed: quota exceeded for this principal today" {
		t.Errorf("read %+v", rec)
	}
	// The same record stored now leaves the repeats out, and reads back
	// the same.
	stored, err := EncodeRecord(rec, nil)
	if err != nil || !IsCompactRecord(stored) || len(stored) >= len(oldRecord) {
		t.Fatalf("stored again (%v): %d bytes for %d: %s", err, len(stored), len(oldRecord), stored)
	}
	back, err := DecodeRecord(stored, nil)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := json.Marshal(back); string(again) != oldRecord {
		t.Errorf("stored again, read back\n%s\nwant\n%s", again, oldRecord)
	}
}

// A stored record whose marks point at what is not there is refused with
// an error, never read as something else.
func TestDecodeRecordRefusesBrokenMarks(t *testing.T) {
	for _, data := range []string{
		`{"form":2,"id":"x","result_call":3,"calls":[]}`,
		`{"form":2,"id":"x","error":{"code":"E","message":"m","message_call":2},"calls":[]}`,
		`{"form":2,"id":"x","calls":[{"seq":1,"result":{"content":[]},"derived":"text 0"}]}`,
		`{"form":2,"id":"x","calls":[{"seq":1,"result":{"content":[]},"derived":"structured 5 0"}]}`,
		`{"form":2,"id":"x","calls":[{"seq":1,"result":{"content":[]},"derived":"text -1"}]}`,
	} {
		if rec, err := DecodeRecord([]byte(data), nil); err == nil {
			t.Errorf("%s read as %+v", data, rec)
		}
	}
}

// benchRecord is a one-call run record whose backend answered text and
// structuredContent, as the Go and TypeScript SDKs do.
func benchRecord() *RunRecord {
	structured := map[string]any{"key": "k-1", "value": 42, "side_effect": true}
	text, _ := json.Marshal(structured)
	res, _ := json.Marshal(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}, StructuredContent: structured})
	return &RunRecord{ID: "0123456789abcdef01234567", Code: "const r = await counter.bump({key: 'k-1'});\nreturn r;", Tier: "simple",
		Started: time.Now(), Outcome: OutcomeOK, Console: []string{}, Result: NewBlob(text),
		Calls: []CallRecord{{Seq: 1, Backend: "counter", Tool: "bump", Args: NewBlob([]byte(`{"key":"k-1"}`)), OK: true, Result: NewBlob(res)}}}
}

// BenchmarkEncodeRecord is what the run store spends per run to leave the
// repeats out, beside json.Marshal of the record (what it spent before).
func BenchmarkEncodeRecord(b *testing.B) {
	rec := benchRecord()
	b.Run("json.Marshal", func(b *testing.B) {
		for b.Loop() {
			_, _ = json.Marshal(rec)
		}
	})
	b.Run("EncodeRecord", func(b *testing.B) {
		for b.Loop() {
			_, _ = EncodeRecord(rec, nil)
		}
	})
}

// The scanner splits what encoding/json splits, and every cut or
// malformed input ends in an error, not a panic or a wrong split.
func TestRecordScannerSplitsAsEncodingJSON(t *testing.T) {
	raw := []byte(` {"_meta":{"a":[1,{"b":"}]\"["}]},"content" : [{"type":"text","text":"{\"x\":1}"}, 2, "s", null, true],"isError":false,"n":-1.5e3} `)
	ms, err := members(raw)
	var want map[string]json.RawMessage
	if err != nil || json.Unmarshal(raw, &want) != nil || len(ms) != len(want) {
		t.Fatalf("members: %v, %d of %d", err, len(ms), len(want))
	}
	for _, m := range ms {
		if string(m.value) != string(want[m.key]) {
			t.Errorf("member %s: %s, want %s", m.key, m.value, want[m.key])
		}
	}
	blocks, err := items(ms[1].value)
	var wantItems []json.RawMessage
	if err != nil || json.Unmarshal(ms[1].value, &wantItems) != nil || len(blocks) != len(wantItems) {
		t.Fatalf("items: %v, %d of %d", err, len(blocks), len(wantItems))
	}
	if text, ok := plainText(blocks[0]); !ok || text != `{"x":1}` {
		t.Errorf("plainText: %q %v", text, ok)
	}
	for i := range raw {
		whole := strings.TrimSpace(string(raw[:i])) == strings.TrimSpace(string(raw))
		if _, err := members(raw[:i]); err == nil && !whole {
			t.Errorf("members of a cut object %q: no error", raw[:i])
		}
		_, _ = items(raw[:i])
		_, _ = expandResult(raw[:i], "text 0")
		_, _ = expandResult(raw[:i], "structured 0 1")
	}
}
