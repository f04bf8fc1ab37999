package bench

// A reproduction for upstream (go-sdk v1.8.0, internal/json.Unmarshal): every
// Unmarshal builds a segmentio json.Decoder over a bytes.Reader, which
// allocates (and zeroes) a 32 KB buffer, copies the input into it, growing
// it by doubling and parsing the partial value again after every read
// (readValue), then decodes. segmentio's json.Parse with the same flag
// decodes the bytes in place. The SDK decodes every JSON-RPC message
// (jsonrpc2.DecodeMessage), every request's params and _meta, and every
// result this way: for a 1 MB tool result, twice. design/mcp.md has the
// figures. This module builds with isogate's patched segmentio/encoding
// (bench/go.mod's replace, third_party/segmentio-encoding/PATCHES.md),
// whose Decoder sizes its buffer from the bytes.Reader: drop the replace to
// see the published v0.5.4's 32 KB per value again.
//
//	go test -run GoSDKUnmarshal -bench GoSDKUnmarshal ./

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/segmentio/encoding/json"
)

// sdkUnmarshal is go-sdk v1.8.0 internal/json.Unmarshal (checkMaxDepth omitted: the same in both).
func sdkUnmarshal(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DontMatchCaseInsensitiveStructFields()
	return dec.Decode(v)
}

// leanUnmarshal decodes in place with the same flag, refusing trailing data.
func leanUnmarshal(data []byte, v any) error {
	rest, err := json.Parse(data, v, json.DontMatchCaseInsensitiveStructFields)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(rest)) != 0 {
		return fmt.Errorf("invalid character after top-level value")
	}
	return nil
}

type sdkMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
}

func sdkJSONInputs() map[string][]byte {
	text, _ := json.Marshal(megabyteOfRecords())
	return map[string][]byte{
		"call-request": []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"},"_meta":{"progressToken":3}}}`),
		"1MB-result":   []byte(`{"jsonrpc":"2.0","id":8,"result":{"content":[{"type":"text","text":` + string(text) + `}]}}`),
	}
}

func BenchmarkGoSDKUnmarshal(b *testing.B) {
	for name, data := range sdkJSONInputs() {
		for _, f := range []struct {
			name string
			fn   func([]byte, any) error
		}{{"sdk", sdkUnmarshal}, {"lean", leanUnmarshal}} {
			b.Run(name+"/"+f.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(data)))
				for b.Loop() {
					var m sdkMsg
					if err := f.fn(data, &m); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func TestGoSDKUnmarshalAlternativeDecodesTheSame(t *testing.T) {
	for name, data := range sdkJSONInputs() {
		var a, b sdkMsg
		if err := sdkUnmarshal(data, &a); err != nil {
			t.Fatal(err)
		}
		if err := leanUnmarshal(data, &b); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Fatalf("%s: decoded differently", name)
		}
	}
}

// BenchmarkGoSDKCallByEra is the go-sdk's own cost of one tools/call (a
// client and a server in one process over in-memory transports, an echo
// tool) by protocol era: from 2026-07-28 on every request carries _meta
// (protocolVersion, clientInfo, clientCapabilities) that the server's
// validateRequestMeta decodes from the params once more, then each of
// clientInfo and clientCapabilities through remarshal (json.Marshal and
// internal/json.Unmarshal again): more decodes, each with its 32 KB buffer.
//
//	go test -run '^$' -bench GoSDKCallByEra -benchmem ./
func BenchmarkGoSDKCallByEra(b *testing.B) {
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		b.Run(version, func(b *testing.B) {
			ctx := context.Background()
			srv := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1"}, nil)
			type args struct {
				Message string `json:"message"`
			}
			mcp.AddTool(srv, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in args) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Message}}}, nil, nil
			})
			ct, st := mcp.NewInMemoryTransports()
			ss, err := srv.Connect(ctx, st, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer ss.Close()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "x"}}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
