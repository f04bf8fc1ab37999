package gateway

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/backend"
)

// codeModeGateway serves the meta-tools over two era backends: "lb" on
// 2025-11-25 (it asks during calls the old way) and "mb" on 2026-07-28.
func codeModeGateway(t *testing.T) *Gateway {
	t.Helper()
	cfg := config.Default()
	cfg.Server.CacheDir = t.TempDir()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	cancelled := make(chan string, 16)
	lb := backend.InMemory("lb", newEraBackend("lb", cancelled))
	lb.ProtocolVersion = "2025-11-25"
	mb := backend.InMemory("mb", newEraBackend("mb", cancelled))
	return startHealthy(t, cfg, app.Options{Runner: testPool(), ExtraSpecs: []backend.Spec{lb, mb}})
}

// fidelityProgram asks through both backends in every way they ask.
const fidelityProgram = `
const out = [];
out.push(await lb.elicit({who: "p1"}));
out.push(await lb.sample({who: "p2"}));
out.push(await mb.elicit({who: "p3"}));
out.push(await mb.inputs({who: "p4"}));
out.push(await lb.inputs({who: "p5"}));
out.push(await lb.progress({}));
out.push(await mb.log({}));
return out;`

// TestCodeModeAsksTheClient: while a call_tool_chain program runs, the
// backends' elicitation and sampling requests, and the input requests
// their results carry, reach the calling client and its answers reach the
// backends — the old way for a 2025-11-25 client (a request during the
// call), the new way for a 2026-07-28 client (the run pauses, the input
// requests come back in the call_tool_chain result, the client's retry
// resumes it); backend progress becomes the run's progress, and backend
// log messages reach the client tagged with the backend.
func TestCodeModeAsksTheClient(t *testing.T) {
	g := codeModeGateway(t)

	t.Run("2025-11-25", func(t *testing.T) {
		cs, a, ev := eraClient(t, g, "2025-11-25")
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "call_tool_chain",
			Arguments: map[string]any{"code": fidelityProgram}, Meta: mcp.Meta{"progressToken": "run-1"}})
		if err != nil {
			t.Fatal(err)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if res.IsError {
			t.Fatalf("program failed: %s", text)
		}
		label := "C2025-11-25"
		for _, want := range []string{
			`"accept ` + label + `"`, // lb.elicit, on the shared 2025-11-25 session
			`"` + label + `-model: ` + label + ` answers prompt from p2"`,
			`"accept ` + label + `"`, // mb.elicit, on the client's own session
			`"accept ` + label + ` / ` + label + ` answers greet p4"`,
			`"accept ` + label + ` / ` + label + ` answers greet p5"`,
			`"done"`, `"logged"`,
		} {
			if !strings.Contains(text, want) {
				t.Errorf("result lacks %s:\n%s", want, text)
			}
		}
		if got := len(a.asked()); got != 7 {
			t.Errorf("the client was asked %d times, want 7: %q", got, a.asked())
		}
		// The client's SDK hands notifications to their handler apart
		// from the response: the backend's progress may be delivered
		// after the result, so wait for it (bounded) rather than drain
		// what has arrived.
		deadline := time.After(30 * time.Second)
		for sawBackend := false; !sawBackend; {
			select {
			case p := <-ev.progress:
				if p.ProgressToken != "run-1" {
					t.Errorf("progress with token %v, want the run's", p.ProgressToken)
				}
				sawBackend = strings.HasPrefix(p.Message, "lb: half")
			case <-deadline:
				t.Fatal("the backend's progress did not become the run's")
			}
		}
		if m := ev.nextLog(t, label); m.Logger != "mb/era" || m.Data != "from mb" {
			t.Errorf("log message: logger %q data %v, want mb/era from mb", m.Logger, m.Data)
		}
	})

	t.Run("2026-07-28", func(t *testing.T) {
		cs, a, _ := eraClient(t, g, "2026-07-28")
		// The go-sdk client answers the input requests and retries by
		// itself; mid-call requests cannot reach it, so only the
		// input-request tools are called.
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "call_tool_chain",
			Arguments: map[string]any{"code": `return [await mb.inputs({who: "q1"}), await mb.inputs({who: "q2"})]`}})
		if err != nil {
			t.Fatal(err)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if res.IsError {
			t.Fatalf("program failed: %s", text)
		}
		var got []string
		if err := json.Unmarshal([]byte(text), &got); err != nil || len(got) != 2 ||
			got[0] != "accept C2026-07-28 / C2026-07-28 answers greet q1" || got[1] != "accept C2026-07-28 / C2026-07-28 answers greet q2" {
			t.Errorf("result %q", text)
		}
		if n := len(a.asked()); n != 4 {
			t.Errorf("the client answered %d input requests, want 4: %q", n, a.asked())
		}
	})
}
