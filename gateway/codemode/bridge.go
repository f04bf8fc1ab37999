package codemode

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/isogate/isogate/gateway/pipeline"
	"github.com/isogate/isogate/v8sandbox"
)

//go:embed bridge.js
var bridgeJS string

// Host function names the bridge prelude consumes (and then deletes).
const (
	fnCall       = "__isogate_call"
	fnConsole    = "__isogate_console"
	fnInterfaces = "__isogate_interfaces"
	fnInterface  = "__isogate_interface"
)

var bridgeFunctions = []v8sandbox.Function{
	{Name: fnCall, Async: true},
	{Name: fnConsole},
	{Name: fnInterfaces},
	{Name: fnInterface},
}

type backendSpec struct {
	Name  string      `json:"name"`
	Ident string      `json:"ident"`
	Tools [][2]string `json:"tools"` // [original, sanitized]
}

// prelude generates the bridge for a catalogue snapshot.
func prelude(tools []Tool) string {
	var specs []*backendSpec
	byName := map[string]*backendSpec{}
	for _, t := range tools {
		b := byName[t.Backend]
		if b == nil {
			b = &backendSpec{Name: t.Backend, Ident: t.BackendIdent}
			byName[t.Backend] = b
			specs = append(specs, b)
		}
		b.Tools = append(b.Tools, [2]string{t.Name, t.NameIdent})
	}
	if specs == nil {
		specs = []*backendSpec{}
	}
	// JSON is a JavaScript expression: names cannot inject code.
	return strings.Replace(bridgeJS, "SPEC);", string(mustMarshal(specs))+");", 1)
}

// bridgeHost serves one run's host functions: tool calls through the
// Caller, console capture, and interface introspection.
type bridgeHost struct {
	engine  *Engine
	tools   []Tool
	console *consoleBuffer
	onCall  func(tool string)
}

func (h *bridgeHost) Call(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	switch name {
	case fnCall:
		var a []json.RawMessage
		if err := json.Unmarshal(args, &a); err != nil || len(a) != 3 {
			return nil, fmt.Errorf("bad tool call arguments")
		}
		var backend, tool string
		if json.Unmarshal(a[0], &backend) != nil || json.Unmarshal(a[1], &tool) != nil {
			return nil, fmt.Errorf("bad tool call arguments")
		}
		value, err := h.engine.callTool(ctx, backend, tool, a[2])
		if h.onCall != nil {
			h.onCall(backend + "." + tool)
		}
		return value, err
	case fnConsole:
		var a []string
		if err := json.Unmarshal(args, &a); err != nil || len(a) != 2 {
			return nil, fmt.Errorf("bad console arguments")
		}
		h.console.add(a[0], a[1])
		return nil, nil
	case fnInterfaces:
		return mustMarshal(interfaces(h.tools)), nil
	case fnInterface:
		var a []string
		if err := json.Unmarshal(args, &a); err != nil || len(a) != 1 {
			return nil, fmt.Errorf("__getToolInterface expects a tool name")
		}
		return toolInterface(h.tools, a[0])
	}
	return nil, fmt.Errorf("unknown host function %q", name)
}

// callTool runs one backend call and converts its result for the program.
func (e *Engine) callTool(ctx context.Context, backend, tool string, args json.RawMessage) (json.RawMessage, error) {
	if args == nil || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	if len(args) == 0 || args[0] != '{' {
		return nil, fmt.Errorf("%s.%s expects one object argument, e.g. %s.%s({...})", backend, tool, backend, tool)
	}
	res, err := e.opts.Caller.CallTool(ctx, backend, tool, args)
	var value json.RawMessage
	if err == nil {
		value, err = ToolValue(backend+"."+tool, res)
	} else if ctx.Err() == nil && pipeline.CodeOf(err) == "" {
		err = fmt.Errorf("backend %q: %w", backend, err)
	}
	var toolErr *ToolError
	if errors.As(err, &toolErr) {
		return nil, toolErr
	}
	return value, err
}

// Interface describes one tool for __interfaces and __getToolInterface.
type Interface struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

func interfaceOf(t Tool) Interface {
	schema := t.InputSchema
	if len(schema) == 0 {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	return Interface{Name: t.Backend + "." + t.Name, Description: t.Description, InputSchema: schema}
}

// interfaces maps backend → tool → interface.
func interfaces(tools []Tool) map[string]map[string]Interface {
	out := map[string]map[string]Interface{}
	for _, t := range tools {
		if out[t.Backend] == nil {
			out[t.Backend] = map[string]Interface{}
		}
		out[t.Backend][t.Name] = interfaceOf(t)
	}
	return out
}

// toolInterface finds a tool by "backend.tool" (original or sanitized) or
// by a bare name that only one backend has.
func toolInterface(tools []Tool, name string) (json.RawMessage, error) {
	t, err := findTool(tools, name)
	if err != nil {
		return nil, err
	}
	return mustMarshal(interfaceOf(t)), nil
}

func findTool(tools []Tool, name string) (Tool, error) {
	var bare []Tool
	for _, t := range tools {
		for _, full := range []string{t.Backend + "." + t.Name, t.BackendIdent + "." + t.NameIdent} {
			if name == full {
				return t, nil
			}
		}
		if name == t.Name || name == t.NameIdent {
			bare = append(bare, t)
		}
	}
	switch len(bare) {
	case 1:
		return bare[0], nil
	case 0:
		names := make([]string, 0, len(tools))
		for _, t := range tools {
			names = append(names, t.Backend+"."+t.Name)
		}
		if s := closest(name, names); s != "" {
			return Tool{}, fmt.Errorf("no tool named %q; did you mean %q?", name, s)
		}
		return Tool{}, fmt.Errorf("no tool named %q", name)
	}
	var names []string
	for _, t := range bare {
		names = append(names, t.Backend+"."+t.Name)
	}
	return Tool{}, fmt.Errorf("tool name %q is ambiguous: %s", name, strings.Join(names, ", "))
}

// consoleBuffer keeps the first lines a program logs.
type consoleBuffer struct {
	mu       sync.Mutex
	lines    []string
	max      int
	maxLine  int
	dropped  int
	warnings int
}

func (c *consoleBuffer) add(level, text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.lines) >= c.max {
		c.dropped++
		return
	}
	if len(text) > c.maxLine {
		text = truncateUTF8(text, c.maxLine) + "… [line truncated]"
	}
	prefix := ""
	if level != "log" && level != "info" {
		prefix = "[" + level + "] "
	}
	c.lines = append(c.lines, prefix+text)
}

// snapshot returns the captured lines, with a note when lines were dropped.
func (c *consoleBuffer) snapshot() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := append([]string(nil), c.lines...)
	if c.dropped > 0 {
		out = append(out, fmt.Sprintf("[console: %d more lines dropped after the first %d]", c.dropped, c.max))
	}
	return out
}

func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
