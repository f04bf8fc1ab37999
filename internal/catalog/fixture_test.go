package catalog

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// obj builds an object schema as a Go map, the way the SDK's client
// delivers schemas.
func obj(required []string, props map[string]any) map[string]any {
	s := map[string]any{"type": "object", "properties": props}
	if required != nil {
		s["required"] = required
	}
	return s
}

func str(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
func num(desc string) map[string]any { return map[string]any{"type": "number", "description": desc} }

// everythingTools mimics @modelcontextprotocol/server-everything.
func everythingTools() []*mcp.Tool {
	return []*mcp.Tool{
		{Name: "echo", Title: "Echo Tool", Description: "Echoes back the input string",
			InputSchema: obj([]string{"message"}, map[string]any{"message": str("Message to echo")})},
		{Name: "get-sum", Title: "Get Sum Tool", Description: "Returns the sum of two numbers",
			InputSchema: obj([]string{"a", "b"}, map[string]any{"a": num("First number"), "b": num("Second number")})},
		{Name: "get-tiny-image", Title: "Get Tiny Image Tool", Description: "Returns a tiny MCP logo image.",
			InputSchema: obj(nil, map[string]any{})},
		{Name: "trigger-long-running-operation", Title: "Trigger Long Running Operation Tool",
			Description: "Demonstrates a long running operation with progress updates.",
			InputSchema: obj(nil, map[string]any{
				"duration": map[string]any{"type": "number", "default": 10, "description": "Duration of the operation in seconds"},
				"steps":    map[string]any{"type": "number", "default": 5, "description": "Number of steps in the operation"},
			})},
		{Name: "get-env", Title: "Print Environment Tool",
			Description: "Returns all environment variables, helpful for debugging MCP server configuration",
			InputSchema: obj(nil, nil), Meta: mcp.Meta{"tags": []any{"debug"}}},
		{Name: "get-structured-content", Title: "Get Structured Content Tool",
			Description: "Returns structured content along with an output schema for client data validation",
			InputSchema: obj([]string{"location"}, map[string]any{
				"location": map[string]any{"type": "string", "enum": []any{"New York", "Chicago", "Los Angeles"}, "description": "Choose city"},
			}),
			OutputSchema: obj([]string{"temperature", "conditions", "humidity"}, map[string]any{
				"temperature": num("Temperature in celsius"),
				"conditions":  str("Weather conditions description"),
				"humidity":    num("Humidity percentage"),
			})},
		{Name: "gzip-file-as-resource", Title: "GZip File as Resource Tool",
			Description: "Compresses a single file using gzip compression. Depending upon the selected output type, returns either the compressed data as a gzipped resource or a resource link.",
			InputSchema: obj(nil, map[string]any{
				"name":       map[string]any{"type": "string", "default": "README.md.gz", "description": "Name of the output file"},
				"data":       map[string]any{"type": "string", "format": "uri", "description": "URL or data URI of the file content to compress"},
				"outputType": map[string]any{"type": "string", "enum": []any{"resourceLink", "resource"}, "default": "resourceLink"},
			})},
		{Name: "toggle-simulated-logging", Description: "Toggles simulated, random-leveled logging on or off.",
			InputSchema: obj(nil, nil)},
		{Name: "get-annotated-message", Description: "Demonstrates how annotations can be used to provide metadata about content.",
			InputSchema: obj([]string{"messageType"}, map[string]any{
				"messageType":  map[string]any{"type": "string", "enum": []any{"error", "success", "debug"}, "description": "Type of message to demonstrate different annotation patterns"},
				"includeImage": map[string]any{"type": "boolean", "default": false, "description": "Whether to include an example image"},
			})},
	}
}

// calcTools is a second backend that shares the bare name "echo" and talks
// about sums in its descriptions.
func calcTools() []*mcp.Tool {
	return []*mcp.Tool{
		{Name: "add", Description: "Adds two numbers and returns their sum.",
			InputSchema: obj([]string{"x", "y"}, map[string]any{"x": num("Left operand"), "y": num("Right operand")})},
		{Name: "summarize-text", Description: "Summarize a long text into a few sentences.",
			InputSchema: obj([]string{"text"}, map[string]any{"text": str("Text to summarize"),
				"maxSentences": map[string]any{"type": "integer"}})},
		{Name: "echo", Description: "Echo the given value back, unchanged.",
			InputSchema: obj([]string{"value"}, map[string]any{"value": map[string]any{}})},
	}
}

// fsTools is a filesystem-like backend whose parameter names carry meaning
// that the descriptions do not.
func fsTools() []*mcp.Tool {
	return []*mcp.Tool{
		{Name: "read_file", Description: "Read the complete contents of a file from the file system.",
			InputSchema: obj([]string{"path"}, map[string]any{"path": str("Path to read")})},
		{Name: "list_directory", Description: "Get a detailed listing of all files and directories in a specified path.",
			InputSchema: obj([]string{"path"}, map[string]any{"path": str(""), "recursive": map[string]any{"type": "boolean"}})},
		{Name: "search_files", Description: "Find files whose names match a pattern.",
			InputSchema: obj([]string{"path", "pattern"}, map[string]any{
				"path": str(""), "pattern": str("Glob pattern"),
				"excludePatterns": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
			})},
	}
}

// oddTools exercises identifier sanitisation inside one backend.
func oddTools() []*mcp.Tool {
	raw := json.RawMessage(`{"type":"object"}`)
	return []*mcp.Tool{
		{Name: "has.dots", Description: "Dotted name.", InputSchema: raw},
		{Name: "has_dots", Description: "Underscored name.", InputSchema: raw},
		{Name: "123start", Description: "Starts with digits.", InputSchema: raw},
		{Name: "delete", Description: "Reserved word.", InputSchema: raw},
	}
}

// testCatalog returns the four-backend fixture catalogue.
func testCatalog() *Catalog {
	c := New()
	c.SetBackend("everything", []string{"demo"}, everythingTools())
	c.SetBackend("calc", []string{"math"}, calcTools())
	c.SetBackend("fs-server", []string{"files"}, fsTools())
	c.SetBackend("my-backend", nil, oddTools())
	return c
}
