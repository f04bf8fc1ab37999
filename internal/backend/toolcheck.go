package backend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/textcut"
)

// Bounds on what one tool of a backend may bring into the gateway. A tool
// over a bound is shortened (description, title) or loses the oversized part
// (schemas, _meta); it is not dropped.
const (
	// MaxToolNameBytes bounds a tool name; longer names are skipped.
	MaxToolNameBytes = 256
	// MaxToolDescriptionBytes bounds a tool description; longer ones are
	// cut and marked.
	MaxToolDescriptionBytes = 8 << 10
	// MaxToolTitleBytes bounds a tool title.
	MaxToolTitleBytes = 256
	// MaxToolSchemaBytes bounds a tool's input or output schema (as JSON).
	// An input schema over it is replaced by {"type": "object"} (the
	// backend still validates the arguments); an output schema is dropped.
	MaxToolSchemaBytes = 64 << 10
	// MaxToolMetaBytes bounds a tool's _meta; larger ones are dropped.
	MaxToolMetaBytes = 8 << 10
)

// checkToolList repairs a raw tools/list result: entries that are not a
// valid tool (a name that is not a non-empty string, an input schema that
// is not an object schema, a duplicate name) are skipped and logged, the
// others are size-bounded. Anything that is not a tools/list result at all
// is returned as it is, for the SDK to report.
func (b *backend) checkToolList(raw json.RawMessage) json.RawMessage {
	var res map[string]json.RawMessage
	if err := json.Unmarshal(raw, &res); err != nil {
		return raw
	}
	var items []json.RawMessage
	if err := json.Unmarshal(res["tools"], &items); err != nil {
		return raw
	}
	kept := make([]*mcp.Tool, 0, len(items))
	seen := make(map[string]bool, len(items))
	support := make(map[string]string, len(items)) // see noteTaskSupport
	for i, item := range items {
		t, err := checkTool(item)
		if err == nil && seen[t.Name] {
			err = fmt.Errorf("duplicate tool name %q", t.Name)
		}
		if err != nil {
			b.log.Warn("skipping a malformed tool in the backend's tool list",
				slog.Int("index", i), slog.String("tool", toolNameHint(item)), slog.Any("error", err))
			continue
		}
		seen[t.Name] = true
		support[t.Name] = taskSupportOf(item)
		kept = append(kept, t)
	}
	b.noteTaskSupport(support)
	tools, err := json.Marshal(kept)
	if err != nil {
		return raw
	}
	res["tools"] = tools
	out, err := json.Marshal(res)
	if err != nil {
		return raw
	}
	return out
}

// checkTool decodes and validates one tools/list entry and bounds its size.
func checkTool(item json.RawMessage) (*mcp.Tool, error) {
	var t mcp.Tool
	if err := json.Unmarshal(item, &t); err != nil {
		return nil, fmt.Errorf("not a tool: %w", err)
	}
	return boundTool(&t)
}

// boundTool validates a decoded tool and bounds its size, in place.
func boundTool(t *mcp.Tool) (*mcp.Tool, error) {
	switch {
	case t.Name == "":
		return nil, errors.New("empty tool name")
	case len(t.Name) > MaxToolNameBytes:
		return nil, fmt.Errorf("tool name of %d bytes (limit %d)", len(t.Name), MaxToolNameBytes)
	case !utf8.ValidString(t.Name) || strings.ContainsFunc(t.Name, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return nil, fmt.Errorf("tool name %q has control characters or invalid UTF-8", t.Name)
	}
	switch s := t.InputSchema.(type) {
	case nil:
		t.InputSchema = map[string]any{"type": "object"}
	case map[string]any:
		if typ, ok := s["type"]; ok && typ != "object" {
			return nil, fmt.Errorf("input schema has type %v, want object", typ)
		}
		if size := jsonSize(s); size > MaxToolSchemaBytes {
			t.InputSchema = map[string]any{"type": "object"}
			t.Description = appendNote(t.Description, fmt.Sprintf("[input schema of %d bytes omitted]", size))
		}
	default:
		return nil, fmt.Errorf("input schema is a %T, want an object schema", s)
	}
	if t.OutputSchema != nil {
		s, ok := t.OutputSchema.(map[string]any)
		if !ok || (s["type"] != nil && s["type"] != "object") || jsonSize(s) > MaxToolSchemaBytes {
			t.OutputSchema = nil // optional: the tool works without it
		}
	}
	t.Description = clipNoted(t.Description, MaxToolDescriptionBytes)
	t.Title = clipNoted(t.Title, MaxToolTitleBytes)
	if t.Meta != nil && jsonSize(t.Meta) > MaxToolMetaBytes {
		t.Meta = nil
	}
	return t, nil
}

func jsonSize(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return 1 << 30
	}
	return len(b)
}

// clipNoted cuts s to at most limit bytes (on a rune boundary), the note
// that marks the cut included.
func clipNoted(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	note := fmt.Sprintf("… [truncated, %d bytes]", len(s))
	return textcut.Prefix(s, limit-len(note)) + note
}

func appendNote(desc, note string) string {
	if desc == "" {
		return note
	}
	return desc + " " + note
}

// toolNameHint returns the name field of a raw entry for the log, however
// malformed the entry is.
func toolNameHint(item json.RawMessage) string {
	var v struct {
		Name json.RawMessage `json:"name"`
	}
	_ = json.Unmarshal(item, &v)
	return clipNoted(string(v.Name), 80)
}

// toolListConn wraps the client side of a backend connection and passes the
// results of tools/list requests through checkToolList before the SDK
// decodes them, so that one malformed entry does not fail the whole list.
type toolListConn struct {
	mcp.Connection
	b       *backend
	notices *notices // counts the notifications read (notices.go)

	mu      sync.Mutex
	pending map[jsonrpc.ID]bool // ids of tools/list requests in flight
}

// Write implements mcp.Connection.
func (c *toolListConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "tools/list" && req.ID.IsValid() {
		c.mu.Lock()
		c.pending[req.ID] = true
		c.mu.Unlock()
	}
	return c.Connection.Write(ctx, msg)
}

// Read implements mcp.Connection.
func (c *toolListConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err == nil && forwarded(msg) {
		c.notices.noteRead()
	}
	if resp, ok := msg.(*jsonrpc.Response); ok && err == nil {
		c.mu.Lock()
		mine := c.pending[resp.ID]
		delete(c.pending, resp.ID)
		c.mu.Unlock()
		if mine && resp.Error == nil && len(resp.Result) > 0 {
			resp.Result = c.b.checkToolList(resp.Result)
		}
	}
	return msg, err
}
