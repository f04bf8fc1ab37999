package runcode

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ToolName is the name of the MCP tool.
const ToolName = "run_code"

// AddTo adds the run_code tool to server. Its description lists the APIs
// registered so far. Whether to offer the tool at all
// (config.RunCodeConfig.Enabled) is the caller's decision.
func (r *Service) AddTo(server *mcp.Server) {
	mcp.AddTool(server, r.Tool(), r.handle)
}

// Tool returns the definition of the run_code tool.
func (r *Service) Tool() *mcp.Tool {
	apis := r.snapshot()
	// Without APIs a program can only compute: read-only, idempotent and
	// closed-world. Each API that is not read-only makes it none of those.
	readOnly := r.state == nil // state.set writes the caller's state
	for _, a := range apis {
		readOnly = readOnly && a.ReadOnly
	}
	return &mcp.Tool{
		Name:         ToolName,
		Title:        "Run JavaScript",
		Description:  r.Description(),
		InputSchema:  inputSchema(),
		OutputSchema: outputSchema(),
		Annotations: &mcp.ToolAnnotations{
			Title:           "Run JavaScript",
			ReadOnlyHint:    readOnly,
			IdempotentHint:  readOnly,
			DestructiveHint: jsonschema.Ptr(!readOnly),
			OpenWorldHint:   jsonschema.Ptr(len(apis) > 0),
		},
	}
}

// Description is the tool's description: what it does, its limits and the
// registered APIs.
func (r *Service) Description() string {
	var b strings.Builder
	fmt.Fprintf(&b, `Run a short JavaScript program in an isolated V8 sandbox and get its result: for calculations, data transformation, parsing, formatting and other small computations.

The code is the body of an async function: "return" a value to make it the result, and use "await" freely. console.log/info/debug write to stdout, console.warn/error to stderr. Only ECMAScript built-ins are available (no require, import, process, timers, file system or network), plus the api.* functions listed below.

Limits: code up to %d characters; timeout_ms defaults to %d and is clamped to %d-%d; %d MB heap; %d console lines; result up to 1 MB of JSON. The result is converted to JSON: undefined becomes null, BigInt a string, Map an object, Set an array, Date an ISO string, Error {name, message, stack}, functions "[Function: name]", cycles "[Circular]", nesting deeper than %d levels "[MaxDepth]".

The output has ok, result, stdout, stderr, warnings, error {type: ValidationError | TimeoutError | VMError, message} and environment.`,
		MaxCodeChars, DefaultTimeoutMS, MinTimeoutMS, MaxTimeoutMS, HeapMB, MaxConsoleLines, MaxDepth)
	apis := r.APIs()
	if len(apis) == 0 {
		b.WriteString("\n\nNo api.* functions are configured.")
	} else {
		b.WriteString("\n\nAPIs (async, so call them with await):")
		for _, a := range apis {
			fmt.Fprintf(&b, "\n- %s", a.Signature)
			if a.Returns != "" {
				fmt.Fprintf(&b, " -> %s", a.Returns)
			}
			if a.Description != "" {
				fmt.Fprintf(&b, ": %s", a.Description)
			}
		}
	}
	if r.state != nil {
		b.WriteString(stateDescription)
	}
	b.WriteString("\n\nExample: {\"code\": \"const xs = [3, 1, 2];\\nconsole.log(xs.length);\\nreturn xs.sort();\"}")
	return b.String()
}

func (r *Service) handle(ctx context.Context, _ *mcp.CallToolRequest, in Input) (*mcp.CallToolResult, Output, error) {
	out := r.Run(ctx, in)
	return &mcp.CallToolResult{
		IsError: !out.OK,
		Content: []mcp.Content{&mcp.TextContent{Text: out.Text()}},
	}, out, nil
}

func inputSchema() *jsonschema.Schema {
	s, err := jsonschema.For[Input](nil)
	if err != nil {
		panic(err)
	}
	p := s.Properties
	p["code"].Description = fmt.Sprintf("JavaScript, run as the body of an async function: use return for the result "+
		"and await for promises. At most %d characters.", MaxCodeChars)
	p["language"].Enum = []any{"javascript"}
	p["language"].Description = `Always "javascript" (the default).`
	p["timeout_ms"].Description = fmt.Sprintf("Wall-clock limit in milliseconds; default %d, clamped to %d-%d.",
		DefaultTimeoutMS, MinTimeoutMS, MaxTimeoutMS)
	p["hints"].Description = "Context for the api.* functions that use it, such as " +
		`{"location": {"latitude": 52.52, "longitude": 13.41}} for api.getWeather().`
	p["hints"].Properties = map[string]*jsonschema.Schema{
		"location": {
			Type:        "object",
			Description: "Where the user is.",
			Properties: map[string]*jsonschema.Schema{
				"latitude":  {Type: "number", Minimum: jsonschema.Ptr(-90.0), Maximum: jsonschema.Ptr(90.0)},
				"longitude": {Type: "number", Minimum: jsonschema.Ptr(-180.0), Maximum: jsonschema.Ptr(180.0)},
			},
			Required: []string{"latitude", "longitude"},
		},
	}
	return s
}

func outputSchema() *jsonschema.Schema {
	s, err := jsonschema.For[Output](&jsonschema.ForOptions{
		// Any JSON value, as an object schema: strict clients (the TypeScript
		// SDK) reject a boolean `true` sub-schema, which is what {} marshals to.
		TypeSchemas: map[reflect.Type]*jsonschema.Schema{reflect.TypeFor[json.RawMessage](): {
			Description: "The program's return value: any JSON value.",
		}},
	})
	if err != nil {
		panic(err)
	}
	s.Properties["error"].Properties["type"].Enum = []any{ValidationError, TimeoutError, VMError}
	return s
}

// Text renders the output for people and models reading the tool result.
func (o Output) Text() string {
	var b strings.Builder
	if o.OK {
		b.WriteString("ok\n\nresult:\n")
		b.WriteString(indentJSON(o.Result))
		b.WriteByte('\n')
	} else if o.Error != nil {
		fmt.Fprintf(&b, "%s: %s\n", o.Error.Type, o.Error.Message)
		if stack := stackFrames(o.Error.Stack); stack != "" {
			b.WriteString(stack)
			b.WriteByte('\n')
		}
	}
	section := func(title string, lines []string, bullet string) {
		if len(lines) == 0 {
			return
		}
		fmt.Fprintf(&b, "\n%s:\n", title)
		for _, l := range lines {
			b.WriteString(bullet)
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	section("stdout", o.Stdout, "")
	section("stderr", o.Stderr, "")
	section("warnings", o.Warnings, "- ")
	return strings.TrimRight(b.String(), "\n")
}

// indentJSON pretty-prints small results and leaves large ones compact.
func indentJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "null"
	}
	if len(raw) > 64<<10 {
		return string(raw)
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return string(raw)
	}
	return buf.String()
}

// stackFrames keeps the "at …" lines of a stack trace (the first line
// repeats the message), at most ten of them.
func stackFrames(stack string) string {
	var frames []string
	for line := range strings.SplitSeq(stack, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "at ") && len(frames) < 10 {
			frames = append(frames, "    "+strings.TrimSpace(line))
		}
	}
	return strings.Join(frames, "\n")
}
