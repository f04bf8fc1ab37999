package surface

import (
	"encoding/json"
	"reflect"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// dropDuplicateText returns res without the text contents that only repeat
// its structuredContent (server.passthrough_drop_duplicate_text): a text
// that is structuredContent's JSON, or that equals one of its top-level
// string values (the filesystem server returns a file both as text and as
// {"content": text}). Other contents, and a result without
// structuredContent or with an error, are returned as they are; res itself
// is not modified.
func dropDuplicateText(res *mcp.CallToolResult) *mcp.CallToolResult {
	if res == nil || res.IsError || res.StructuredContent == nil {
		return res
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return res
	}
	var structured any
	if json.Unmarshal(b, &structured) != nil {
		return res
	}
	values := map[string]bool{}
	if m, ok := structured.(map[string]any); ok {
		for _, v := range m {
			if s, ok := v.(string); ok {
				values[s] = true
			}
		}
	}
	kept := make([]mcp.Content, 0, len(res.Content))
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok && (values[tc.Text] || sameJSON(tc.Text, structured)) {
			continue
		}
		kept = append(kept, c)
	}
	if len(kept) == len(res.Content) {
		return res
	}
	out := *res
	out.Content = kept
	return &out
}

// sameJSON reports whether text is JSON equal to v (decoded from JSON).
func sameJSON(text string, v any) bool {
	var t any
	return json.Unmarshal([]byte(text), &t) == nil && reflect.DeepEqual(t, v)
}
