package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// filesystemServer returns the path of the real server-filesystem
// installed by `make deps` (npm ci in examples/), and interop/, where the
// TypeScript SDK scripts run.
func filesystemServer(t *testing.T) (server, interop string) {
	t.Helper()
	server, _ = filepath.Abs("../../examples/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")
	interop, _ = filepath.Abs("../../interop")
	for _, p := range []string{server, filepath.Join(interop, "node_modules/@modelcontextprotocol/sdk")} {
		if _, err := os.Stat(p); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatal(err)
			}
			t.Skipf("not installed (make deps): %v", err)
		}
	}
	return server, interop
}

// sdkCall is the report of interop/scripts/call_tool.mjs.
type sdkCall struct {
	Tools []string
	Call  struct {
		OK    bool
		Value struct {
			Content []struct {
				Type, Text string
			}
			StructuredContent map[string]any
			IsError           bool
		}
		Error any
	}
	Bytes int
	Read  map[string]string
	Fatal any
}

// callWithSDK runs interop/scripts/call_tool.mjs against url.
func callWithSDK(t *testing.T, interop, url string, flags ...string) sdkCall {
	t.Helper()
	cmd := exec.Command("node", append([]string{"scripts/call_tool.mjs", "--http", url}, flags...)...)
	cmd.Dir = interop
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	var r sdkCall
	if err != nil || json.Unmarshal(out, &r) != nil || r.Fatal != nil {
		t.Fatalf("call_tool.mjs: %v\n%s", err, out)
	}
	return r
}

// twoFilesystems writes a configuration serving two real filesystem
// servers under server.tool_names bare: "filesystem" first in the file
// (on main/), "docs2" second (on docs/), although docs2 sorts first;
// filesystemExtra is added to filesystem's settings.
func twoFilesystems(t *testing.T, dir, filesystemExtra string) string {
	t.Helper()
	server, _ := filesystemServer(t)
	path := filepath.Join(dir, "isogate.yaml")
	cfg := fmt.Sprintf(`server:
  cache_dir: %s
  tool_names: bare
  expose: passthrough
sandbox:
  isolation: thread
  trusted_code: true
backends:
  filesystem:
    command: node
    args: [%q, %q]
%s  docs2:
    command: node
    args: [%q, %q]
`, filepath.Join(dir, "cache"), server, filepath.Join(dir, "main"), filesystemExtra, server, filepath.Join(dir, "docs"))
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSharedNamesFollowTheFileAndReloadsSayWhereTheyGo (issue 33, 1 and
// 2): with two real filesystem servers and server.tool_names bare, the
// official TypeScript SDK client's plain read_file reads the first
// backend in the file (not the first by name); a SIGHUP reload that denies
// write_file on it re-points plain write_file to docs2, and the reload says
// so (its INFO line and a WARN line naming old → new), /readyz and
// isogate://stats list it, and no line claims the opposite.
func TestSharedNamesFollowTheFileAndReloadsSayWhereTheyGo(t *testing.T) {
	_, interop := filesystemServer(t)
	dir := t.TempDir()
	for _, d := range []string{"main", "docs"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mainFile := filepath.Join(dir, "main", "a.txt")
	if err := os.WriteFile(mainFile, []byte("in the main directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := twoFilesystems(t, dir, "")
	s := serveWithConfig(t, path)

	r := callWithSDK(t, interop, s.url, "--call", "read_text_file", "--args", fmt.Sprintf(`{"path": %q}`, mainFile))
	if !slices.Contains(r.Tools, "read_text_file") || !slices.Contains(r.Tools, "docs2__read_text_file") {
		t.Fatalf("tools: %v", r.Tools)
	}
	if !r.Call.OK || r.Call.Value.IsError || len(r.Call.Value.Content) == 0 || r.Call.Value.Content[0].Text != "in the main directory" {
		t.Fatalf("plain read_text_file did not read the first backend's directory: %+v", r.Call)
	}
	if n := strings.Count(s.log(), "both offer"); n != 1 {
		t.Errorf("the shared names are reported on %d lines, want one for the pair:\n%s", n, s.log())
	}

	twoFilesystems(t, dir, "    tools:\n      deny: [write_file, edit_file, move_file]\n")
	logged := len(strings.Split(s.log(), "\n"))
	if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the reload", func() bool { return s.logged("configuration reloaded") })
	after := strings.Join(strings.Split(s.log(), "\n")[logged:], "\n")
	for _, want := range []string{
		`WRN plain tool name "write_file" now reaches backend "docs2" (was "filesystem")`,
		`configuration reloaded`, `tool write_file: filesystem → docs2`,
	} {
		if !strings.Contains(after, want) {
			t.Errorf("the reload's log lacks %s:\n%s", want, after)
		}
	}
	if strings.Contains(after, "docs2__write_file") {
		t.Errorf("the reload's log still lists docs2's write_file as prefixed:\n%s", after)
	}

	resp, err := http.Get(strings.TrimSuffix(s.url, "/mcp") + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	type repointed struct {
		Repointed []struct{ Kind, Name, From, To string } `json:"repointed_names"`
	}
	want := struct{ Kind, Name, From, To string }{"tool", "write_file", "filesystem", "docs2"}
	var ready repointed
	if err := json.Unmarshal(body, &ready); err != nil || !slices.Contains(ready.Repointed, want) {
		t.Errorf("/readyz repointed_names (%v): %s", err, body)
	}
	r = callWithSDK(t, interop, s.url, "--read", "isogate://stats")
	var stats repointed
	if err := json.Unmarshal([]byte(r.Read["isogate://stats"]), &stats); err != nil || !slices.Contains(stats.Repointed, want) {
		t.Errorf("isogate://stats repointed_names (%v): %s", err, r.Read["isogate://stats"])
	}

	// doctor reports the shared names on one line for the pair too, and so
	// does its log.
	out, stderr, code := runBinary(t, "", "doctor", "--config", path)
	if lines := strings.Count(out, "shared tool names"); code != 0 || lines != 1 || strings.Count(stderr, "both offer") != 1 {
		t.Errorf("doctor: exit %d, %d lines of shared tool names:\n%s\n%s", code, lines, out, stderr)
	}
}

// TestPassthroughDropDuplicateText (issue 33, 8): the real filesystem
// server returns a file's text twice, as content and as structuredContent;
// with server.passthrough_drop_duplicate_text the official TypeScript SDK
// client gets it once, in structuredContent (which still passes the tool's
// outputSchema check), in fewer bytes. Off, the result is the backend's.
func TestPassthroughDropDuplicateText(t *testing.T) {
	server, interop := filesystemServer(t)
	dir := t.TempDir()
	text := strings.Repeat("a line of the file\n", 200)
	file := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	serve := func(drop bool) sdkCall {
		path := filepath.Join(t.TempDir(), "isogate.yaml")
		cfg := fmt.Sprintf("server:\n  cache_dir: %s\n  passthrough_drop_duplicate_text: %v\nsandbox:\n  isolation: thread\n  trusted_code: true\n"+
			"backends:\n  filesystem:\n    command: node\n    args: [%q, %q]\n", filepath.Join(dir, "cache"), drop, server, dir)
		if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		url := startHTTP(t, path)
		r := callWithSDK(t, interop, url+"?expose=passthrough", "--call", "read_text_file", "--args", fmt.Sprintf(`{"path": %q}`, file))
		if !r.Call.OK || r.Call.Value.IsError || r.Call.Value.StructuredContent["content"] != text {
			t.Fatalf("drop %v: %+v", drop, r.Call)
		}
		return r
	}
	off, on := serve(false), serve(true)
	if len(off.Call.Value.Content) != 1 || off.Call.Value.Content[0].Text != text {
		t.Errorf("off: the backend's content changed: %+v", off.Call.Value.Content)
	}
	if len(on.Call.Value.Content) != 0 {
		t.Errorf("on: the duplicate text is still there: %+v", on.Call.Value.Content)
	}
	t.Logf("read_text_file of %d bytes: %d bytes received as the backend sends it, %d without the duplicate text (%.2f×)",
		len(text), off.Bytes, on.Bytes, float64(off.Bytes)/float64(on.Bytes))
	if on.Bytes*3 > off.Bytes*2 {
		t.Errorf("on: %d bytes, off %d", on.Bytes, off.Bytes)
	}
}
