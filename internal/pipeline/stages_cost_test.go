package pipeline

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
)

// idleStages are the pipeline's stages as a passthrough call with nothing
// to do finds them: no principal (audit), a policy that allows the tool,
// an argument check that admits it, no approval, no run (record), no
// answerer (input rounds), no lease (fence).
func idleStages() []struct {
	name  string
	stage Stage
} {
	policy := NewPolicy(map[string]config.Backend{"echo": {Name: "echo"}})
	return []struct {
		name  string
		stage Stage
	}{
		{"audit", AuditStage(slog.New(slog.DiscardHandler))},
		{"policy", PolicyStage(policy)},
		{"arguments", ArgumentsStage(func(string, string, json.RawMessage) error { return nil })},
		{"approval", ApprovalStage(policy)},
		{"record", RecordStage()},
		{"input", InputStage()},
		{"fence", FenceStage()},
	}
}

// constResult is a backend that answers at once, the same result each time.
var constResult = CallerFunc(func(context.Context, *Call) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello"}}}, nil
})

// TestIdleStagesCostNothing: a stage whose feature has nothing to do for a
// call (no principal to audit, no run to record, no approval, no answerer,
// no lease) allocates nothing: a feature that is off or idle costs a call
// no garbage. The schema check itself is the catalogue's (costed in
// BenchmarkHotPath's pipeline row), not the stage's.
func TestIdleStagesCostNothing(t *testing.T) {
	ctx := context.Background()
	for _, s := range idleStages() {
		caller := s.stage(constResult)
		c := &Call{Backend: "echo", Tool: "echo", Args: json.RawMessage(`{"message":"hello"}`)}
		n := testing.AllocsPerRun(200, func() {
			if _, err := caller.Call(ctx, c); err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
		}) - testing.AllocsPerRun(200, func() { _, _ = constResult.Call(ctx, c) })
		if n != 0 {
			t.Errorf("idle %s stage: %.0f allocations per call, want 0", s.name, n)
		}
	}
}

// BenchmarkStages measures each stage of the pipeline alone, idle as in
// TestIdleStagesCostNothing, around a backend that answers at once (its
// own cost included in every row: see the const row), and all of them
// chained as New chains them.
//
//	go test -run '^$' -bench Stages -benchmem ./internal/pipeline/
func BenchmarkStages(b *testing.B) {
	ctx := context.Background()
	run := func(b *testing.B, caller Caller) {
		b.ReportAllocs()
		c := &Call{Backend: "echo", Tool: "echo", Args: json.RawMessage(`{"message":"hello"}`)}
		for b.Loop() {
			if _, err := caller.Call(ctx, c); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("const", func(b *testing.B) { run(b, constResult) })
	var all []Stage
	for _, s := range idleStages() {
		all = append(all, s.stage)
		b.Run(s.name, func(b *testing.B) { run(b, s.stage(constResult)) })
	}
	b.Run("chained", func(b *testing.B) { run(b, Chain(constResult, all...)) })
}
