package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
)

var resultURIRE = regexp.MustCompile(`isogate://result/[0-9a-f]{32}`)

// readResult calls the read_result tool through cs.
func readResult(t *testing.T, cs *mcp.ClientSession, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "read_result", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	return res.Content[0].(*mcp.TextContent).Text, res.IsError
}

// A string cut by max_output_size names its URI, and read_result pages
// through the whole of it, from any session of its principal.
func TestCutStringReadableThroughReadResult(t *testing.T) {
	h := newHarness(t, nil)
	code := `const r = await everything.echo({message: "é" + "abcdefghij".repeat(600) + "THE END"}); return r`
	text, isErr := h.chain(t, map[string]any{"code": code, "max_output_size": 1000})
	if isErr || len(text) > 1000 {
		t.Fatalf("isError %v, %d bytes: %s", isErr, len(text), text)
	}
	uri := resultURIRE.FindString(text)
	if uri == "" {
		t.Fatalf("cut string names no result URI: %s", text)
	}
	var whole strings.Builder
	offset, calls := 0, 0
	for {
		part, isErr := readResult(t, h.cs, map[string]any{"uri": uri, "offset": offset, "limit": 1000})
		if isErr {
			t.Fatalf("read_result: %s", part)
		}
		calls++
		body, trailer, ok := strings.Cut(part, "\n[bytes ")
		if !ok {
			t.Fatalf("no range trailer: %q", part)
		}
		whole.WriteString(body)
		var start, end, total int
		if _, err := fmt.Sscanf(trailer, "%d-%d of %d", &start, &end, &total); err != nil || start != offset {
			t.Fatalf("trailer %q: %v", trailer, err)
		}
		if end == total {
			break
		}
		if !strings.Contains(trailer, fmt.Sprintf(`"offset": %d`, end)) {
			t.Fatalf("trailer does not say how to go on: %q", trailer)
		}
		offset = end
	}
	full, isErr := readResult(t, h.cs, map[string]any{"uri": uri})
	if isErr || full != whole.String() || calls < 6 {
		t.Fatalf("paged read (%d calls) differs from the whole read", calls)
	}
	// A string result is stored as its text, as it is returned.
	if !strings.HasSuffix(full, "THE END") || !strings.HasPrefix(full, "Echo: é") {
		t.Fatalf("stored result is not the whole string: %.80q", full)
	}

	// Another session of this process reads it too (without
	// authentication the process is the one principal).
	other := h.otherSession(t)
	if msg, isErr := readResult(t, other, map[string]any{"uri": uri}); isErr || !strings.Contains(msg, "abcdefghij") {
		t.Fatalf("another session of the process reading the stored result: %v %.100s", isErr, msg)
	}
	if msg, isErr := readResult(t, h.cs, map[string]any{"uri": "isogate://other/x"}); !isErr || !strings.Contains(msg, "bad result path") {
		t.Fatalf("bad URI: %v %s", isErr, msg)
	}
}

// read_result is listed with honest annotations and an input schema whose
// properties are all object schemas (the TypeScript SDK rejects others).
func TestReadResultListing(t *testing.T) {
	h := newHarness(t, nil)
	list, err := h.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range list.Tools {
		if tool.Name != "read_result" {
			continue
		}
		a := tool.Annotations
		if a == nil || !a.ReadOnlyHint || !a.IdempotentHint || a.DestructiveHint != nil && *a.DestructiveHint {
			t.Fatalf("annotations: %+v", a)
		}
		b, _ := json.Marshal(tool.InputSchema)
		var schema struct {
			Type       string                     `json:"type"`
			Required   []string                   `json:"required"`
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if err := json.Unmarshal(b, &schema); err != nil || schema.Type != "object" || len(schema.Required) != 1 || schema.Required[0] != "uri" {
			t.Fatalf("schema %s: %v", b, err)
		}
		for name, p := range schema.Properties {
			if !strings.HasPrefix(string(p), "{") {
				t.Fatalf("property %s is not an object schema: %s", name, p)
			}
		}
		return
	}
	t.Fatal("read_result not listed")
}

// otherSession connects a second client to the same gateway.
func (h *harness) otherSession(t *testing.T) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	if _, err := h.g.Server().Connect(context.Background(), st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "other"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// Errors and console output are bounded by max_output_size like results,
// in both isolation modes, and the full text stays readable.
func TestErrorsAndConsoleBounded(t *testing.T) { isolations(t, testErrorsBounded) }

func testErrorsBounded(t *testing.T, mode config.Isolation) {
	// Generous timeout: megabytes of error text cross the process boundary
	// slowly under -race on a loaded machine.
	h := newHarness(t, withIsolation(mode, func(c *config.Config) { c.Sandbox.Timeout = 60 * time.Second }))
	const limit = 1000
	cases := []struct{ name, code, head string }{
		{"huge message", `throw new Error('x'.repeat(2e6))`, "Error: xxxx"},
		{"huge thrown string", `throw 'q'.repeat(3e6) + 'END'`, "qqqq"},
		{"huge console", `for (let i = 0; i < 300; i++) console.log(i + ' ' + 'y'.repeat(5000)); return 1`, "1"},
		{"huge console then error", `for (let i = 0; i < 300; i++) console.error('z'.repeat(5000)); throw new RangeError('r'.repeat(1e5))`, "RangeError: rrr"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			text, _ := h.chain(t, map[string]any{"code": c.code, "max_output_size": limit})
			// The result (or error) and the console are each bounded; the
			// console never gets less than a quarter of the budget.
			if len(text) > limit+limit/4+100 {
				t.Fatalf("%d bytes returned for max_output_size %d", len(text), limit)
			}
			if !strings.HasPrefix(text, c.head) {
				t.Fatalf("head %q missing: %.200q", c.head, text)
			}
			uri := resultURIRE.FindString(text)
			if uri == "" {
				t.Fatalf("no result URI for the cut text: %q", text)
			}
			page, isErr := readResult(t, h.cs, map[string]any{"uri": uri, "limit": 100})
			if isErr || !strings.Contains(page, "[bytes 0-100 of ") {
				t.Fatalf("read_result: %v %q", isErr, page)
			}
		})
	}
}

// The meta-tools refuse text inputs far beyond any real use, with a short
// error, instead of echoing them or matching them against every tool.
func TestMetaToolInputsBounded(t *testing.T) {
	h := newHarness(t, nil)
	huge := strings.Repeat("y", 1<<20)
	for _, c := range []struct {
		tool  string
		args  map[string]any
		field string
	}{
		{"search_tools", map[string]any{"query": huge}, "query"},
		{"search_tools", map[string]any{"query": "sum", "tag": huge}, "tag"},
		{"tool_info", map[string]any{"tool_name": "everything." + huge}, "tool_name"},
		{"read_result", map[string]any{"uri": "isogate://result/" + huge}, "uri"},
	} {
		res, err := h.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil {
			t.Fatal(err)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if !res.IsError || len(text) > 200 || !strings.HasPrefix(text, c.field+" is too long") {
			t.Fatalf("%s with a 1 MiB %s: isError %v, %d bytes: %.200s", c.tool, c.field, res.IsError, len(text), text)
		}
	}
	// Inputs of a real size still work.
	res, err := h.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "search_tools", Arguments: map[string]any{"query": "sum"}})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "get-sum") {
		t.Fatalf("search: %v %+v", err, res)
	}
}

// TestReadResultPagesKeepCharactersWhole: read_result with a limit below the
// size of one character (2-, 3- and 4-byte UTF-8) returns that character
// whole, never U+FFFD, and each next offset goes on exactly where the page
// ended: the pages put together are the stored text, byte for byte.
func TestReadResultPagesKeepCharactersWhole(t *testing.T) {
	h := newHarness(t, nil)
	code := `return "é€😀a".repeat(60)`
	text, isErr := h.chain(t, map[string]any{"code": code, "max_output_size": 200})
	uri := resultURIRE.FindString(text)
	if isErr || uri == "" {
		t.Fatalf("isError %v, no result URI: %s", isErr, text)
	}
	full, isErr := readResult(t, h.cs, map[string]any{"uri": uri})
	if isErr || !strings.HasPrefix(full, "é€😀a") {
		t.Fatalf("whole read: %v %.40q", isErr, full)
	}
	for _, limit := range []int{1, 2, 3} {
		var got strings.Builder
		offset := 0
		for got.Len() < 40 {
			part, isErr := readResult(t, h.cs, map[string]any{"uri": uri, "offset": offset, "limit": limit})
			body, trailer, ok := strings.Cut(part, "\n[bytes ")
			if isErr || !ok {
				t.Fatalf("limit %d offset %d: %v %q", limit, offset, isErr, part)
			}
			if body == "" || !utf8.ValidString(body) || strings.ContainsRune(body, utf8.RuneError) {
				t.Fatalf("limit %d offset %d: page %q is not whole characters", limit, offset, body)
			}
			var start, end, total int
			if _, err := fmt.Sscanf(trailer, "%d-%d of %d", &start, &end, &total); err != nil || start != offset || end != offset+len(body) {
				t.Fatalf("limit %d: trailer %q for page %q at offset %d", limit, trailer, body, offset)
			}
			got.WriteString(body)
			offset = end
		}
		if !strings.HasPrefix(full, got.String()) {
			t.Fatalf("limit %d: pages %q are not the stored text %.60q", limit, got.String(), full)
		}
	}
}
