package backend

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
)

// rewritingTransport is the server side of an in-memory connection whose
// outgoing responses are rewritten: a hostile backend built from a real
// go-sdk server.
type rewritingTransport struct {
	mcp.Transport
	rewrite func(json.RawMessage) json.RawMessage
}

func (t rewritingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return rewritingConn{c, t.rewrite}, nil
}

type rewritingConn struct {
	mcp.Connection
	rewrite func(json.RawMessage) json.RawMessage
}

func (c rewritingConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if resp, ok := msg.(*jsonrpc.Response); ok && resp.Result != nil {
		resp.Result = c.rewrite(resp.Result)
	}
	return c.Connection.Write(ctx, msg)
}

// hostileSpec serves srv with its responses passed through rewrite.
func hostileSpec(name string, srv *mcp.Server, rewrite func(json.RawMessage) json.RawMessage) Spec {
	return Spec{Backend: config.Backend{Name: name, Transport: TransportCustom}, Dial: func(ctx context.Context) (mcp.Transport, error) {
		ct, st := mcp.NewInMemoryTransports()
		if _, err := srv.Connect(context.Background(), rewritingTransport{st, rewrite}, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}}
}

func TestMalformedToolsSkippedAndBounded(t *testing.T) {
	srv := newCalcServer()
	noop := func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return textResult("ok"), nil, nil
	}
	for _, name := range []string{"numeric-name", "string-schema", "array-schema", "dup"} {
		mcp.AddTool(srv, &mcp.Tool{Name: name}, noop)
	}
	huge := strings.Repeat("é", 256<<10) // 512 KB of two-byte runes
	mcp.AddTool(srv, &mcp.Tool{Name: "huge", Description: huge, Title: strings.Repeat("t", 10000)}, noop)
	big := map[string]any{}
	for i := range 1000 {
		big[strings.Repeat("p", 20)+string(rune('a'+i%26))+strings.Repeat("q", i%50)] = map[string]any{"type": "string", "description": strings.Repeat("d", 40)}
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "big-schema", InputSchema: map[string]any{"type": "object", "properties": big}}, noop)

	rewrite := func(raw json.RawMessage) json.RawMessage {
		if !bytes.Contains(raw, []byte(`"tools":[`)) {
			return raw
		}
		var res struct {
			Tools []map[string]any `json:"tools"`
		}
		if err := json.Unmarshal(raw, &res); err != nil {
			return raw
		}
		for _, tool := range res.Tools {
			switch tool["name"] {
			case "numeric-name":
				tool["name"] = 123
			case "string-schema":
				tool["inputSchema"] = "nope"
			case "array-schema":
				tool["inputSchema"] = map[string]any{"type": "array"}
			}
		}
		res.Tools = append(res.Tools, map[string]any{"name": "dup", "inputSchema": map[string]any{"type": "object"}})
		out, _ := json.Marshal(res)
		return out
	}
	m := startManager(t, Options{Specs: []Spec{hostileSpec("hostile", srv, rewrite)}})
	waitHealthy(t, m)

	tools := m.Tools()["hostile"]
	if got := sorted(toolNames(tools)); !slices.Equal(got, []string{"add", "big-schema", "dup", "huge"}) {
		t.Fatalf("tools = %v", got)
	}
	for _, tool := range tools {
		b, _ := json.Marshal(tool)
		if len(b) > MaxToolDescriptionBytes+2*MaxToolSchemaBytes+MaxToolMetaBytes+MaxToolTitleBytes+1024 {
			t.Errorf("tool %s is %d bytes", tool.Name, len(b))
		}
		switch tool.Name {
		case "huge":
			if len(tool.Description) > MaxToolDescriptionBytes || !strings.Contains(tool.Description, "[truncated, 524288 bytes]") ||
				!strings.HasPrefix(tool.Description, "éé") || len(tool.Title) > MaxToolTitleBytes {
				t.Errorf("huge: description of %d bytes ending %q", len(tool.Description), tool.Description[len(tool.Description)-40:])
			}
		case "big-schema":
			if s, _ := json.Marshal(tool.InputSchema); string(s) != `{"type":"object"}` || !strings.Contains(tool.Description, "input schema of") {
				t.Errorf("big-schema: schema %.80s, description %q", s, tool.Description)
			}
		}
	}
	res, err := m.CallTool(context.Background(), "hostile", "add", map[string]any{"a": 1, "b": 2})
	if err != nil || resultText(t, res) != "3" {
		t.Fatalf("call to the good tool: %v", err)
	}
}
