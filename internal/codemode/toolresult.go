package codemode

import (
	"encoding/json"
	"fmt"
	"strings"
	"unsafe"

	"github.com/isogate/isogate/v8sandbox"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CodeToolError is the code (e.code) of the error a program's tool call
// rejects with when the tool answered with isError: true.
const CodeToolError v8sandbox.Code = "TOOL_ERROR"

// ToolError is a backend tool call that returned isError: true.
type ToolError struct {
	Tool    string
	Message string
}

func (e *ToolError) Error() string { return fmt.Sprintf("%s failed: %s", e.Tool, e.Message) }

// ToolValue converts a backend tool result into the JSON value a program
// sees: structuredContent when present; else the content blocks, text parsed
// as JSON when it is JSON, several blocks as an array, and images, audio and
// blobs as small descriptors (never base64). The JSON is canonical, so every
// tier renders the same bytes for the same result.
func ToolValue(tool string, res *mcp.CallToolResult) (json.RawMessage, error) {
	if res == nil {
		return json.RawMessage("null"), nil
	}
	if res.IsError {
		return nil, &ToolError{Tool: tool, Message: contentText(res.Content)}
	}
	if res.StructuredContent != nil {
		raw, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return nil, fmt.Errorf("%s: encoding structured content: %w", tool, err)
		}
		return canonicalJSON(raw)
	}
	values := make([]json.RawMessage, 0, len(res.Content))
	for _, c := range res.Content {
		v, err := blockValue(c)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", tool, err)
		}
		values = append(values, v)
	}
	switch len(values) {
	case 0:
		return json.RawMessage("null"), nil
	case 1:
		return values[0], nil
	}
	return canonicalJSON(mustMarshal(values))
}

func blockValue(c mcp.Content) (json.RawMessage, error) {
	switch b := c.(type) {
	case *mcp.TextContent:
		// canonicalJSON validates as it copies: text that is not JSON
		// (or nests too deep) is kept as a string.
		if t := strings.TrimSpace(b.Text); t != "" && (t[0] == '{' || t[0] == '[') {
			// canonicalJSON only reads its input and copies what it keeps:
			// the text is read in place, not copied first.
			if v, err := canonicalJSON(unsafe.Slice(unsafe.StringData(t), len(t))); err == nil {
				return v, nil
			}
		}
		return canonicalJSON(mustMarshal(b.Text))
	case *mcp.ImageContent:
		return canonicalJSON(mustMarshal(map[string]any{"type": "image", "mimeType": b.MIMEType, "size": len(b.Data)}))
	case *mcp.AudioContent:
		return canonicalJSON(mustMarshal(map[string]any{"type": "audio", "mimeType": b.MIMEType, "size": len(b.Data)}))
	case *mcp.ResourceLink:
		return canonicalJSON(mustMarshal(map[string]any{"type": "resource_link", "uri": b.URI, "name": b.Name, "mimeType": b.MIMEType}))
	case *mcp.EmbeddedResource:
		d := map[string]any{"type": "resource"}
		if r := b.Resource; r != nil {
			d["uri"], d["mimeType"] = r.URI, r.MIMEType
			if r.Blob != nil {
				d["size"] = len(r.Blob)
			} else {
				d["text"] = r.Text
			}
		}
		return canonicalJSON(mustMarshal(d))
	}
	return canonicalJSON(mustMarshal(map[string]any{"type": fmt.Sprintf("%T", c)}))
}

// contentText joins the text blocks of a result, for error messages.
func contentText(content []mcp.Content) string {
	var parts []string
	for _, c := range content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	if len(parts) == 0 {
		return "the tool reported an error without a message"
	}
	return strings.Join(parts, "\n")
}

func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("codemode: marshal %T: %v", v, err))
	}
	return b
}
