package runcode

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
)

// connect serves r's tool on an in-process MCP server and returns a client
// session connected to it.
func connect(t *testing.T, r *Service) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	server := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "v0"}, nil)
	r.AddTo(server)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "v0"}, nil)
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

// call calls run_code and decodes its structured output.
func call(t *testing.T, cs *mcp.ClientSession, args any) (*mcp.CallToolResult, Output) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: ToolName, Arguments: args})
	if err != nil {
		t.Fatalf("CallTool: %v", err)
	}
	var out Output
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("structured content %s: %v", b, err)
		}
	}
	return res, out
}

func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("content = %d items", len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content is %T", res.Content[0])
	}
	return tc.Text
}

func TestTool_List(t *testing.T) {
	r := newRunner(t, config.RunCodeConfig{
		Fetch:   config.FetchConfig{AllowHosts: []string{"api.example.com"}},
		Weather: config.WeatherConfig{Enabled: true, BaseURL: "https://weather.invalid"},
	})
	r.Register(addAPI())
	cs := connect(t, r)
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Tools) != 1 || list.Tools[0].Name != "run_code" {
		t.Fatalf("tools = %+v", list.Tools)
	}
	tool := list.Tools[0]
	for _, want := range []string{
		"isolated V8 sandbox",
		"code up to 12000 characters; timeout_ms defaults to 3000 and is clamped to 250-5000; 16 MB heap; 100 console lines",
		"- api.fetch(url, {method, headers, body}) -> {status, ok, url, headers, body}: HTTP(S) request. Only these hosts are allowed: api.example.com.",
		"- api.getWeather({latitude, longitude}) -> {latitude,",
		"- api.add(a, b) -> number: Adds two numbers.",
	} {
		if !strings.Contains(tool.Description, want) {
			t.Errorf("description lacks %q:\n%s", want, tool.Description)
		}
	}
	schema, _ := json.Marshal(tool.InputSchema)
	for _, want := range []string{`"required":["code"]`, `"enum":["javascript"]`, `"type":["null","integer"]`, `"additionalProperties":false`, `"location"`} {
		if !strings.Contains(string(schema), want) {
			t.Errorf("input schema lacks %s: %s", want, schema)
		}
	}
	if tool.OutputSchema == nil {
		t.Error("no output schema")
	}
}

func TestTool_CallOK(t *testing.T) {
	cs := connect(t, newRunner(t, config.RunCodeConfig{}))
	res, out := call(t, cs, map[string]any{
		"code":       "console.log('hi', {a: 1}); console.warn('w'); return {sum: [1, 2, 3].reduce((a, b) => a + b)}",
		"language":   "javascript",
		"timeout_ms": 10000,
	})
	if res.IsError || !out.OK {
		t.Fatalf("isError %v, out %+v", res.IsError, out)
	}
	if compact(t, string(out.Result)) != `{"sum":6}` || strings.Join(out.Stdout, "|") != "hi { a: 1 }" ||
		strings.Join(out.Stderr, "|") != "w" || out.Environment.TimeoutMS != 5000 || out.Environment.Engine != "v8" {
		t.Fatalf("out = %+v", out)
	}
	want := "ok\n\nresult:\n{\n  \"sum\": 6\n}\n\nstdout:\nhi { a: 1 }\n\nstderr:\nw\n\nwarnings:\n- timeout_ms 10000 is above the maximum; using 5000"
	if got := text(t, res); got != want {
		t.Fatalf("text:\n%s\nwant:\n%s", got, want)
	}
}

func TestTool_ErrorsAreToolResults(t *testing.T) {
	cs := connect(t, newRunner(t, config.RunCodeConfig{}))
	cases := []struct {
		args            map[string]any
		typ, msg, inTxt string
	}{
		{map[string]any{"code": strings.Repeat("x", MaxCodeChars+1)}, ValidationError, "the limit is 12000", "ValidationError: code is 12001"},
		{map[string]any{"code": "for (;;) {}", "timeout_ms": 250}, TimeoutError, "250 ms", "TimeoutError: execution exceeded 250 ms"},
		{map[string]any{"code": "function f() { return f() + 1 } f()"}, VMError, "RangeError: Maximum call stack size exceeded",
			"VMError: RangeError: Maximum call stack size exceeded\n    at f (code.js:1:"},
		{map[string]any{"code": "const a = []; for (;;) a.push([a.length])"}, VMError, "out of memory", "VMError: out of memory"},
	}
	for _, c := range cases {
		res, out := call(t, cs, c.args)
		if !res.IsError || out.OK || out.Error == nil || out.Error.Type != c.typ || !strings.Contains(out.Error.Message, c.msg) {
			t.Errorf("%.40s: isError %v, out %+v", c.args["code"], res.IsError, out)
			continue
		}
		if got := text(t, res); !strings.Contains(got, c.inTxt) {
			t.Errorf("%.40s: text %q lacks %q", c.args["code"], got, c.inTxt)
		}
	}
}

func TestTool_MalformedArguments(t *testing.T) {
	cs := connect(t, newRunner(t, config.RunCodeConfig{}))
	cases := []struct {
		args any
		want string
	}{
		{map[string]any{}, `missing properties: ["code"]`},
		{map[string]any{"code": 42}, `code`},
		{map[string]any{"code": "1", "timeout_ms": "fast"}, `timeout_ms`},
		{map[string]any{"code": "1", "timeout_ms": 1.5}, `timeout_ms`},
		{map[string]any{"code": "1", "language": "python"}, `language`},
		{map[string]any{"code": "1", "hints": []int{1}}, `hints`},
		{map[string]any{"code": "1", "hints": map[string]any{"location": map[string]any{"latitude": 500, "longitude": 0}}}, `latitude`},
		{map[string]any{"code": "1", "source": "2"}, `source`},
	}
	for _, c := range cases {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: ToolName, Arguments: c.args})
		if err != nil {
			t.Errorf("%v: protocol error %v, want a tool error", c.args, err)
			continue
		}
		got := text(t, res)
		if !res.IsError || !strings.Contains(got, "validating \"arguments\"") || !strings.Contains(got, c.want) {
			t.Errorf("%v: isError %v, text %q; want it to mention %q", c.args, res.IsError, got, c.want)
		}
	}
}
