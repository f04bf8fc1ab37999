package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func init() {
	RegisterSection(Section{Title: "Context efficiency", Order: 13, Run: contextSection})
}

// The context benchmark: a fixed set of realistic agent tasks on the real
// npm servers (server-filesystem, server-memory, server-everything), each
// done three ways, as an agent would:
//
//   - direct: the agent is connected to the three servers and makes the
//     tool calls itself, reading every result;
//   - code mode: the agent is connected to isogate (meta-tools), searches
//     the catalogue once, then sends one or two call_tool_chain programs;
//   - passthrough: the agent is connected to isogate with
//     server.expose: passthrough and makes the direct calls through it.
//
// For each it counts the bytes the agent receives (the tools/list it loads
// and every tool result, as JSON) and sends (every call's parameters), and
// its round trips (requests), and checks that the three answers are the
// same (and equal to the answer computed from the files themselves).

// ContextMode is how an agent reaches the servers in the context benchmark.
type ContextMode string

// The modes of the context benchmark.
const (
	ModeDirect      ContextMode = "direct"
	ModeCodeMode    ContextMode = "code mode"
	ModePassthrough ContextMode = "passthrough"
)

// ContextModes are the modes, in the report's order.
var ContextModes = []ContextMode{ModeDirect, ModeCodeMode, ModePassthrough}

// agentMeter counts what an agent exchanges with its MCP servers.
type agentMeter struct {
	ToolList   int // bytes of the tools/list results the agent loaded
	Received   int // bytes of the tool results it read
	Sent       int // bytes of the tool calls it sent
	RoundTrips int // requests (tools/list and tools/call)
}

// contextAgent is one agent: its sessions and what it exchanged.
type contextAgent struct {
	mode     ContextMode
	sessions map[string]*mcp.ClientSession // direct: by server; others: "isogate"
	names    map[string]string             // passthrough: "server.tool" → listed name
	meter    agentMeter
}

// call makes one tool call and returns the text of its result.
func (a *contextAgent) call(ctx context.Context, server, tool string, args map[string]any) (string, error) {
	cs, name := a.sessions[server], tool
	if a.mode != ModeDirect {
		cs = a.sessions["isogate"]
		if n, ok := a.names[server+"."+tool]; ok {
			name = n
		}
	}
	params := &mcp.CallToolParams{Name: name, Arguments: args}
	sent, _ := json.Marshal(params)
	res, err := cs.CallTool(ctx, params)
	a.meter.RoundTrips++
	a.meter.Sent += len(sent)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", a.mode, name, err)
	}
	got, _ := json.Marshal(res)
	a.meter.Received += len(got)
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	if res.IsError {
		return "", fmt.Errorf("%s %s: tool error: %s", a.mode, name, truncate(b.String(), 300))
	}
	return b.String(), nil
}

// listTools loads a session's tool list, as a client does on connecting.
func (a *contextAgent) listTools(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Tool, error) {
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		return nil, err
	}
	b, _ := json.Marshal(res)
	a.meter.ToolList += len(b)
	a.meter.RoundTrips++
	return res.Tools, nil
}

// contextTask is one task of the benchmark.
type contextTask struct {
	Name string
	// What is the task as a person would ask it.
	What string
	// MultiStep marks tasks that take an agent several tool calls directly.
	MultiStep bool
	// Direct does the task with tool calls (also used through passthrough)
	// and returns the answer.
	Direct func(ctx context.Context, a *contextAgent, ws *workspace) (string, error)
	// Query is code mode's discovery search; Programs are its
	// call_tool_chain programs (the last one's result is the answer).
	Query    string
	Programs func(ws *workspace) []string
	// Want is the answer computed from the files themselves ("" when only
	// a server knows it: the three modes must still agree).
	Want func(ws *workspace) string
}

// workspace is the folder the filesystem server serves: a fixed copy of
// real Go sources.
type workspace struct {
	root  string            // served by server-filesystem
	src   string            // root/src: the package the tasks are about
	files map[string]string // src's .go files: name → content
}

// goFiles are the package's .go files, sorted.
func (w *workspace) goFiles() []string {
	var names []string
	for n := range w.files {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

var reExported = regexp.MustCompile(`(?m)^func (?:\([^)]*\) )?([A-Z]\w*)`)

// exported lists the exported function and method names of a file, sorted
// and unique.
func exported(src string) []string {
	var out []string
	for _, m := range reExported.FindAllStringSubmatch(src, -1) {
		if !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	slices.Sort(out)
	return out
}

func lineCount(s string) int { return strings.Count(s, "\n") + 1 }

// helpers is the JavaScript the programs share: the text of a tool result
// (a string, or structured content with the text in .content).
const helpers = `const text = (r) => typeof r === "string" ? r : (r && typeof r.content === "string" ? r.content : JSON.stringify(r));
const goFiles = (listing) => text(listing).split("\n").filter((l) => l.startsWith("[FILE] ") && l.endsWith(".go")).map((l) => l.slice(7)).sort();
const exported = (src) => [...new Set([...src.matchAll(/^func (?:\([^)]*\) )?([A-Z]\w*)/gm)].map((m) => m[1]))].sort();
`

// splitFiles splits read_multiple_files' answer ("path:\ncontent\n"
// blocks separated by "\n---\n") into path → content.
func splitFiles(s string, paths []string) map[string]string {
	out := map[string]string{}
	for i, p := range paths {
		start := strings.Index(s, p+":\n")
		if start < 0 {
			continue
		}
		start += len(p) + 2
		end := len(s)
		if i+1 < len(paths) {
			if j := strings.Index(s[start:], "\n---\n"+paths[i+1]+":\n"); j >= 0 {
				end = start + j
			}
		}
		out[p] = strings.TrimSuffix(s[start:end], "\n")
	}
	return out
}

// readAllGo is what an agent does to read the package: list the folder,
// then read every .go file in one read_multiple_files call.
func readAllGo(ctx context.Context, a *contextAgent, ws *workspace) (map[string]string, error) {
	listing, err := a.call(ctx, "filesystem", "list_directory", map[string]any{"path": ws.src})
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, l := range strings.Split(listing, "\n") {
		if name, ok := strings.CutPrefix(strings.TrimSpace(l), "[FILE] "); ok && strings.HasSuffix(name, ".go") {
			paths = append(paths, filepath.Join(ws.src, name))
		}
	}
	slices.Sort(paths)
	all, err := a.call(ctx, "filesystem", "read_multiple_files", map[string]any{"paths": paths})
	if err != nil {
		return nil, err
	}
	byPath := splitFiles(all, paths)
	out := map[string]string{}
	for p, c := range byPath {
		out[filepath.Base(p)] = c
	}
	return out, nil
}

// readAllGoJS is the same in a program.
const readAllGoJS = `const dir = DIR;
const names = goFiles(await filesystem.list_directory({path: dir}));
const files = {};
await Promise.all(names.map(async (n) => { files[n] = text(await filesystem.read_text_file({path: dir + "/" + n})); }));
`

func jsString(s string) string { b, _ := json.Marshal(s); return string(b) }

// contextTasks are the benchmark's tasks.
func contextTasks() []contextTask {
	return []contextTask{
		{
			Name: "list-go-files", What: "List the .go files of the package folder.",
			Direct: func(ctx context.Context, a *contextAgent, ws *workspace) (string, error) {
				listing, err := a.call(ctx, "filesystem", "list_directory", map[string]any{"path": ws.src})
				if err != nil {
					return "", err
				}
				var names []string
				for _, l := range strings.Split(listing, "\n") {
					if n, ok := strings.CutPrefix(strings.TrimSpace(l), "[FILE] "); ok && strings.HasSuffix(n, ".go") {
						names = append(names, n)
					}
				}
				slices.Sort(names)
				return strings.Join(names, "\n"), nil
			},
			Query: "list files in a directory",
			Programs: func(ws *workspace) []string {
				return []string{helpers + "return goFiles(await filesystem.list_directory({path: " + jsString(ws.src) + "})).join(\"\\n\")"}
			},
			Want: func(ws *workspace) string { return strings.Join(ws.goFiles(), "\n") },
		},
		{
			Name: "count-lines", What: "How many lines do the package's .go files have in total?", MultiStep: true,
			Direct: func(ctx context.Context, a *contextAgent, ws *workspace) (string, error) {
				files, err := readAllGo(ctx, a, ws)
				if err != nil {
					return "", err
				}
				n := 0
				for _, c := range files {
					n += lineCount(c)
				}
				return strconv.Itoa(n), nil
			},
			Query: "read text files",
			Programs: func(ws *workspace) []string {
				return []string{helpers + strings.Replace(readAllGoJS, "DIR", jsString(ws.src), 1) +
					"return String(Object.values(files).reduce((n, c) => n + c.split(\"\\n\").length, 0))"}
			},
			Want: func(ws *workspace) string {
				n := 0
				for _, c := range ws.files {
					n += lineCount(c)
				}
				return strconv.Itoa(n)
			},
		},
		{
			Name: "exported-functions", What: "Which exported functions and methods does the package define?", MultiStep: true,
			Direct: func(ctx context.Context, a *contextAgent, ws *workspace) (string, error) {
				files, err := readAllGo(ctx, a, ws)
				if err != nil {
					return "", err
				}
				var all []string
				for _, c := range files {
					all = append(all, exported(c)...)
				}
				slices.Sort(all)
				return strings.Join(slices.Compact(all), ", "), nil
			},
			Query: "read text files",
			Programs: func(ws *workspace) []string {
				return []string{helpers + strings.Replace(readAllGoJS, "DIR", jsString(ws.src), 1) +
					"return [...new Set(Object.values(files).flatMap(exported))].sort().join(\", \")"}
			},
			Want: func(ws *workspace) string {
				var all []string
				for _, c := range ws.files {
					all = append(all, exported(c)...)
				}
				slices.Sort(all)
				return strings.Join(slices.Compact(all), ", ")
			},
		},
		{
			Name: "files-mentioning", What: `Which .go files mention "koanf"?`, MultiStep: true,
			Direct: func(ctx context.Context, a *contextAgent, ws *workspace) (string, error) {
				files, err := readAllGo(ctx, a, ws)
				if err != nil {
					return "", err
				}
				var hits []string
				for n, c := range files {
					if strings.Contains(c, "koanf") {
						hits = append(hits, n)
					}
				}
				slices.Sort(hits)
				return strings.Join(hits, "\n"), nil
			},
			Query: "read text files",
			Programs: func(ws *workspace) []string {
				return []string{helpers + strings.Replace(readAllGoJS, "DIR", jsString(ws.src), 1) +
					"return Object.keys(files).filter((n) => files[n].includes(\"koanf\")).sort().join(\"\\n\")"}
			},
			Want: func(ws *workspace) string {
				var hits []string
				for _, n := range ws.goFiles() {
					if strings.Contains(ws.files[n], "koanf") {
						hits = append(hits, n)
					}
				}
				return strings.Join(hits, "\n")
			},
		},
		{
			Name: "remember-three-files", What: "Read three files, store one memory entity per file (its package clause and line count), and query them back.", MultiStep: true,
			Direct: func(ctx context.Context, a *contextAgent, ws *workspace) (string, error) {
				names := ws.goFiles()[:3]
				var entities []map[string]any
				for _, n := range names {
					c, err := a.call(ctx, "filesystem", "read_text_file", map[string]any{"path": filepath.Join(ws.src, n)})
					if err != nil {
						return "", err
					}
					entities = append(entities, map[string]any{"name": "file:" + n, "entityType": "go-file",
						"observations": []string{packageClause(c), fmt.Sprintf("%d lines", lineCount(c))}})
				}
				if _, err := a.call(ctx, "memory", "create_entities", map[string]any{"entities": entities}); err != nil {
					return "", err
				}
				var keys []string
				for _, n := range names {
					keys = append(keys, "file:"+n)
				}
				graph, err := a.call(ctx, "memory", "open_nodes", map[string]any{"names": keys})
				if err != nil {
					return "", err
				}
				return entitiesAnswer(graph)
			},
			Query: "store entities in the knowledge graph memory",
			Programs: func(ws *workspace) []string {
				return []string{helpers + `const dir = ` + jsString(ws.src) + `;
const names = goFiles(await filesystem.list_directory({path: dir})).slice(0, 3);
const entities = [];
for (const n of names) {
  const c = text(await filesystem.read_text_file({path: dir + "/" + n}));
  const pkg = c.split("\n").find((l) => l.startsWith("package ")) ?? "";
  entities.push({name: "file:" + n, entityType: "go-file", observations: [pkg, c.split("\n").length + " lines"]});
}
await memory.create_entities({entities});
const g = await memory.open_nodes({names: entities.map((e) => e.name)});
return g.entities.map((e) => e.name + ": " + e.observations.join("; ")).sort().join("\n")`}
			},
			Want: func(ws *workspace) string {
				var lines []string
				for _, n := range ws.goFiles()[:3] {
					c := ws.files[n]
					lines = append(lines, fmt.Sprintf("file:%s: %s; %d lines", n, packageClause(c), lineCount(c)))
				}
				slices.Sort(lines)
				return strings.Join(lines, "\n")
			},
		},
		{
			Name: "index-and-search", What: `Store every file's exported functions in memory, then find the files whose functions mention "Load".`, MultiStep: true,
			Direct: func(ctx context.Context, a *contextAgent, ws *workspace) (string, error) {
				files, err := readAllGo(ctx, a, ws)
				if err != nil {
					return "", err
				}
				var entities []map[string]any
				for _, n := range slices.Sorted(mapKeys(files)) {
					entities = append(entities, map[string]any{"name": "index:" + n, "entityType": "go-file-index",
						"observations": []string{"exports " + strings.Join(exported(files[n]), " ")}})
				}
				if _, err := a.call(ctx, "memory", "create_entities", map[string]any{"entities": entities}); err != nil {
					return "", err
				}
				found, err := a.call(ctx, "memory", "search_nodes", map[string]any{"query": "Load"})
				if err != nil {
					return "", err
				}
				return indexHits(found)
			},
			Query: "search nodes in the knowledge graph memory",
			Programs: func(ws *workspace) []string {
				return []string{helpers + strings.Replace(readAllGoJS, "DIR", jsString(ws.src), 1) + `
await memory.create_entities({entities: Object.keys(files).sort().map((n) => ({name: "index:" + n, entityType: "go-file-index", observations: ["exports " + exported(files[n]).join(" ")]}))});
return "indexed " + Object.keys(files).length`,
					helpers + `const found = await memory.search_nodes({query: "Load"});
return found.entities.filter((e) => e.name.startsWith("index:")).map((e) => e.name.slice(6)).sort().join("\n")`}
			},
			Want: func(ws *workspace) string {
				var hits []string
				for _, n := range ws.goFiles() {
					if strings.Contains("exports "+strings.Join(exported(ws.files[n]), " "), "Load") {
						hits = append(hits, n)
					}
				}
				return strings.Join(hits, "\n")
			},
		},
		{
			Name: "sum-pairs", What: "Add twelve pairs of numbers with everything's get-sum and total them.", MultiStep: true,
			Direct: func(ctx context.Context, a *contextAgent, ws *workspace) (string, error) {
				total := 0.0
				for i := 1; i <= 12; i++ {
					out, err := a.call(ctx, "everything", "get-sum", map[string]any{"a": i, "b": i * 10})
					if err != nil {
						return "", err
					}
					f := strings.Fields(strings.TrimSuffix(strings.TrimSpace(out), "."))
					v, err := strconv.ParseFloat(f[len(f)-1], 64)
					if err != nil {
						return "", fmt.Errorf("get-sum answered %q", out)
					}
					total += v
				}
				return strconv.FormatFloat(total, 'f', -1, 64), nil
			},
			Query: "add two numbers",
			Programs: func(*workspace) []string {
				return []string{`const outs = await Promise.all(Array.from({length: 12}, (_, i) => everything.get_sum({a: i + 1, b: (i + 1) * 10})));
return String(outs.map((o) => Number(String(o).replace(/\.$/, "").split(" ").pop())).reduce((s, v) => s + v, 0))`}
			},
			Want: func(*workspace) string { return "858" },
		},
		{
			Name: "warmest-city", What: "Which of New York, Chicago and Los Angeles is warmest (everything's structured weather)?", MultiStep: true,
			Direct: func(ctx context.Context, a *contextAgent, ws *workspace) (string, error) {
				best, bestT := "", -1e9
				for _, city := range []string{"New York", "Chicago", "Los Angeles"} {
					out, err := a.call(ctx, "everything", "get-structured-content", map[string]any{"location": city})
					if err != nil {
						return "", err
					}
					var w struct {
						Temperature float64 `json:"temperature"`
					}
					if err := json.Unmarshal([]byte(out), &w); err != nil {
						return "", fmt.Errorf("weather for %s: %v: %q", city, err, out)
					}
					if w.Temperature > bestT {
						best, bestT = city, w.Temperature
					}
				}
				return best, nil
			},
			Query: "weather structured content",
			Programs: func(*workspace) []string {
				return []string{`const cities = ["New York", "Chicago", "Los Angeles"];
const ws = await Promise.all(cities.map((location) => everything.get_structured_content({location})));
return cities[ws.reduce((bi, w, i) => w.temperature > ws[bi].temperature ? i : bi, 0)]`}
			},
		},
		{
			Name: "tree-counts", What: "How many files and directories are under the workspace?", MultiStep: false,
			Direct: func(ctx context.Context, a *contextAgent, ws *workspace) (string, error) {
				out, err := a.call(ctx, "filesystem", "directory_tree", map[string]any{"path": ws.root})
				if err != nil {
					return "", err
				}
				var tree []treeEntry
				if err := json.Unmarshal([]byte(out), &tree); err != nil {
					return "", fmt.Errorf("directory_tree: %v", err)
				}
				f, d := countTree(tree)
				return fmt.Sprintf("%d files, %d directories", f, d), nil
			},
			Query: "directory tree",
			Programs: func(ws *workspace) []string {
				return []string{helpers + `const t = await filesystem.directory_tree({path: ` + jsString(ws.root) + `});
const tree = typeof t === "string" ? JSON.parse(t) : (typeof t.content === "string" ? JSON.parse(t.content) : t);
let files = 0, dirs = 0;
const walk = (es) => { for (const e of es) { if (e.type === "directory") { dirs++; walk(e.children ?? []); } else files++; } };
walk(tree);
return files + " files, " + dirs + " directories"`}
			},
			Want: func(ws *workspace) string {
				f, d := 0, 0
				_ = filepath.WalkDir(ws.root, func(p string, e os.DirEntry, err error) error {
					if err != nil || p == ws.root {
						return err
					}
					if e.IsDir() {
						d++
					} else {
						f++
					}
					return nil
				})
				return fmt.Sprintf("%d files, %d directories", f, d)
			},
		},
	}
}

type treeEntry struct {
	Name     string      `json:"name"`
	Type     string      `json:"type"`
	Children []treeEntry `json:"children"`
}

func countTree(es []treeEntry) (files, dirs int) {
	for _, e := range es {
		if e.Type == "directory" {
			dirs++
			f, d := countTree(e.Children)
			files, dirs = files+f, dirs+d
		} else {
			files++
		}
	}
	return files, dirs
}

func mapKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// packageClause is a file's "package x" line.
func packageClause(src string) string {
	for _, l := range strings.Split(src, "\n") {
		if strings.HasPrefix(l, "package ") {
			return l
		}
	}
	return ""
}

// entitiesAnswer renders server-memory's open_nodes answer as the task's
// answer: "name: observation; observation" lines, sorted.
func entitiesAnswer(graph string) (string, error) {
	var g struct {
		Entities []struct {
			Name         string   `json:"name"`
			Observations []string `json:"observations"`
		} `json:"entities"`
	}
	if err := json.Unmarshal([]byte(graph), &g); err != nil {
		return "", fmt.Errorf("open_nodes: %v", err)
	}
	var lines []string
	for _, e := range g.Entities {
		lines = append(lines, e.Name+": "+strings.Join(e.Observations, "; "))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n"), nil
}

// indexHits renders search_nodes' answer: the indexed files found.
func indexHits(found string) (string, error) {
	var g struct {
		Entities []struct {
			Name string `json:"name"`
		} `json:"entities"`
	}
	if err := json.Unmarshal([]byte(found), &g); err != nil {
		return "", fmt.Errorf("search_nodes: %v", err)
	}
	var hits []string
	for _, e := range g.Entities {
		if n, ok := strings.CutPrefix(e.Name, "index:"); ok {
			hits = append(hits, n)
		}
	}
	slices.Sort(hits)
	return strings.Join(hits, "\n"), nil
}

// ContextResult is one task done in one mode.
type ContextResult struct {
	Task   string
	Mode   ContextMode
	Meter  agentMeter
	Answer string
	Err    error
}

// ContextRun is the whole benchmark: every task in every mode.
type ContextRun struct {
	Tasks   []contextTask
	Results map[string]map[ContextMode]*ContextResult
	// ToolList is what each mode's agent loads once on connecting.
	ToolList map[ContextMode]int
	// Want is each task's answer computed from the files (tasks whose
	// answer only a server knows have none).
	Want map[string]string
}

// npmServer is the entry point of an example npm server, or an error
// saying how to install it.
func npmServer(root, pkg string) (string, error) {
	p := filepath.Join(root, "examples/node_modules/@modelcontextprotocol", pkg, "dist/index.js")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%s is not installed (run `make deps`)", pkg)
	}
	return p, nil
}

// newWorkspace copies the repository's config package (its non-test Go
// files) and two folders of docs into dir: real files of realistic size.
func newWorkspace(root, dir string) (*workspace, error) {
	ws := &workspace{root: dir, src: filepath.Join(dir, "src"), files: map[string]string{}}
	if err := os.MkdirAll(ws.src, 0o755); err != nil {
		return nil, err
	}
	matches, _ := filepath.Glob(filepath.Join(root, "config", "*.go"))
	for _, m := range matches {
		if strings.HasSuffix(m, "_test.go") {
			continue
		}
		b, err := os.ReadFile(m)
		if err != nil {
			return nil, err
		}
		name := filepath.Base(m)
		ws.files[name] = string(b)
		if err := os.WriteFile(filepath.Join(ws.src, name), b, 0o644); err != nil {
			return nil, err
		}
	}
	if len(ws.files) < 3 {
		return nil, errors.New("the workspace needs at least three Go files from config/")
	}
	for _, d := range []string{"docs", "design"} {
		matches, _ := filepath.Glob(filepath.Join(root, d, "*.md"))
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, err
		}
		for _, m := range matches {
			b, err := os.ReadFile(m)
			if err != nil {
				return nil, err
			}
			if err := os.WriteFile(filepath.Join(dir, d, filepath.Base(m)), b, 0o644); err != nil {
				return nil, err
			}
		}
	}
	return ws, nil
}

// RunContextBenchmark does every task in every mode. root is the
// repository; bin an isogate binary.
func RunContextBenchmark(ctx context.Context, root, bin string) (*ContextRun, error) {
	fsPath, err := npmServer(root, "server-filesystem")
	if err != nil {
		return nil, err
	}
	memPath, err := npmServer(root, "server-memory")
	if err != nil {
		return nil, err
	}
	evPath, err := npmServer(root, "server-everything")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "isogate-context-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	ws, err := newWorkspace(root, filepath.Join(dir, "workspace"))
	if err != nil {
		return nil, err
	}
	run := &ContextRun{Tasks: contextTasks(), Results: map[string]map[ContextMode]*ContextResult{}, ToolList: map[ContextMode]int{},
		Want: map[string]string{}}
	for _, t := range run.Tasks {
		run.Results[t.Name] = map[ContextMode]*ContextResult{}
		if t.Want != nil {
			run.Want[t.Name] = t.Want(ws)
		}
	}
	for _, mode := range ContextModes {
		memFile := filepath.Join(dir, "memory-"+strings.ReplaceAll(string(mode), " ", "-")+".jsonl")
		a, closeAll, err := connectAgent(ctx, mode, bin, dir, ws, fsPath, memPath, evPath, memFile)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", mode, err)
		}
		run.ToolList[mode] = a.meter.ToolList
		for _, t := range run.Tasks {
			a.meter = agentMeter{}
			r := &ContextResult{Task: t.Name, Mode: mode}
			if mode == ModeCodeMode {
				r.Answer, r.Err = doCodeMode(ctx, a, t, ws)
			} else {
				r.Answer, r.Err = t.Direct(ctx, a, ws)
			}
			r.Answer = strings.TrimSpace(r.Answer)
			r.Meter = a.meter
			run.Results[t.Name][mode] = r
		}
		closeAll()
	}
	return run, nil
}

// doCodeMode does a task through isogate's code mode: one search, then
// the task's programs.
func doCodeMode(ctx context.Context, a *contextAgent, t contextTask, ws *workspace) (string, error) {
	if _, err := a.call(ctx, "isogate", "search_tools", map[string]any{"query": t.Query, "limit": 3}); err != nil {
		return "", err
	}
	var answer string
	for _, p := range t.Programs(ws) {
		out, err := a.call(ctx, "isogate", "call_tool_chain", map[string]any{"code": p})
		if err != nil {
			return "", err
		}
		answer = out
	}
	return answer, nil
}

// connectAgent connects an agent in the given mode.
func connectAgent(ctx context.Context, mode ContextMode, bin, dir string, ws *workspace, fsPath, memPath, evPath, memFile string) (*contextAgent, func(), error) {
	a := &contextAgent{mode: mode, sessions: map[string]*mcp.ClientSession{}, names: map[string]string{}}
	closeAll := func() {
		for _, cs := range a.sessions {
			cs.Close()
		}
	}
	servers := map[string]*exec.Cmd{
		"filesystem": exec.Command("node", fsPath, ws.root),
		"memory":     exec.Command("node", memPath),
		"everything": exec.Command("node", evPath, "stdio"),
	}
	servers["memory"].Env = append(os.Environ(), "MEMORY_FILE_PATH="+memFile)
	if mode == ModeDirect {
		for _, name := range []string{"everything", "filesystem", "memory"} {
			cs, err := connectStdio(ctx, servers[name])
			if err != nil {
				closeAll()
				return nil, nil, fmt.Errorf("%s: %w", name, err)
			}
			a.sessions[name] = cs
			if _, err := a.listTools(ctx, cs); err != nil {
				closeAll()
				return nil, nil, err
			}
		}
		return a, closeAll, nil
	}
	expose := "meta"
	if mode == ModePassthrough {
		expose = "passthrough"
	}
	cfgPath := filepath.Join(dir, "isogate-"+expose+".yaml")
	yaml := fmt.Sprintf(`server:
  cache_dir: %s
  log_level: error
  expose: %s
backends:
  filesystem: {command: node, args: [%q, %q]}
  memory: {command: node, args: [%q], env: {MEMORY_FILE_PATH: %q}}
  everything: {command: node, args: [%q, stdio]}
sandbox:
  timeout: 60s
`, filepath.Join(dir, "cache-"+expose), expose, fsPath, ws.root, memPath, memFile, evPath)
	if err := os.WriteFile(cfgPath, []byte(yaml), 0o600); err != nil {
		return nil, nil, err
	}
	cs, err := connectStdio(ctx, exec.Command(bin, "serve", "--config", cfgPath))
	if err != nil {
		return nil, nil, err
	}
	a.sessions["isogate"] = cs
	// Wait until every backend's tools are listed (a fresh cache): the
	// agent loads the list once, complete.
	deadline := time.Now().Add(60 * time.Second)
	for {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		if mode == ModeCodeMode {
			text, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_tools_meta", Arguments: map[string]any{"page_size": 200}})
			if err == nil && !text.IsError && strings.Contains(textOf(text), "memory.") && strings.Contains(textOf(text), "filesystem.") &&
				strings.Contains(textOf(text), "everything.") {
				break
			}
		} else if len(res.Tools) > 20 && hasTools(res.Tools, "read_graph", "read_text_file", "get-sum") {
			for _, t := range res.Tools {
				for _, s := range []string{"filesystem", "memory", "everything"} {
					if base, ok := strings.CutPrefix(t.Name, s+"__"); ok {
						a.names[s+"."+base] = t.Name
					}
				}
			}
			break
		}
		if time.Now().After(deadline) {
			closeAll()
			return nil, nil, errors.New("the backends did not all connect within 60 s")
		}
		if err := pause(ctx, 200*time.Millisecond); err != nil {
			closeAll()
			return nil, nil, err
		}
	}
	if _, err := a.listTools(ctx, cs); err != nil {
		closeAll()
		return nil, nil, err
	}
	return a, closeAll, nil
}

func hasTools(tools []*mcp.Tool, names ...string) bool {
	for _, n := range names {
		if !slices.ContainsFunc(tools, func(t *mcp.Tool) bool { return t.Name == n || strings.HasSuffix(t.Name, "__"+n) }) {
			return false
		}
	}
	return true
}

func textOf(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// Check reports every answer that differs between the modes or from the
// answer computed from the files, and every failed task.
func (r *ContextRun) Check() []string {
	var problems []string
	for _, t := range r.Tasks {
		results := r.Results[t.Name]
		want, ok := r.Want[t.Name]
		if !ok {
			want = results[ModeDirect].Answer
		}
		for _, mode := range ContextModes {
			res := results[mode]
			switch {
			case res.Err != nil:
				problems = append(problems, fmt.Sprintf("%s, %s: %v", t.Name, mode, res.Err))
			case res.Answer != want:
				problems = append(problems, fmt.Sprintf("%s, %s: answer %q, want %q", t.Name, mode, truncate(res.Answer, 200), truncate(want, 200)))
			}
		}
	}
	return problems
}

// Reduction is how many fewer bytes code mode received than direct calls
// on the multi-step tasks, in percent, with and without the tool list each
// agent loads once.
func (r *ContextRun) Reduction() (withList, withoutList float64) {
	var direct, code int
	for _, t := range r.Tasks {
		if !t.MultiStep {
			continue
		}
		direct += r.Results[t.Name][ModeDirect].Meter.Received
		code += r.Results[t.Name][ModeCodeMode].Meter.Received
	}
	if direct == 0 {
		return 0, 0
	}
	withoutList = 100 * float64(direct-code) / float64(direct)
	dl, cl := direct+r.ToolList[ModeDirect], code+r.ToolList[ModeCodeMode]
	withList = 100 * float64(dl-cl) / float64(dl)
	return withList, withoutList
}

// contextSection is the report's section.
func contextSection(ctx context.Context, cfg ReportConfig) (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	bin, err := buildIsogate(ctx, root)
	if err != nil {
		return "", err
	}
	run, err := RunContextBenchmark(ctx, root, bin)
	if err != nil {
		return "Skipped: " + err.Error() + "\n", nil
	}
	return run.Markdown(), nil
}

// Markdown renders the run as the report's section.
func (r *ContextRun) Markdown() string {
	var b strings.Builder
	b.WriteString("A fixed set of agent tasks on the real npm servers `server-filesystem` (serving a copy of this repository's `config/` Go sources and its docs), `server-memory` and `server-everything`, each done **directly** (the agent connected to the three servers, making the tool calls itself), through isogate's **code mode** (one `search_tools`, then one or two `call_tool_chain` programs) and through isogate in **passthrough** (the direct calls, through isogate). Bytes are the JSON the agent receives (tool results) and sends (call parameters); round trips are its requests. Every answer is checked against the others and against the answer computed from the files.\n\n")
	fmt.Fprintf(&b, "Tool list loaded once on connecting: direct %s, code mode %s, passthrough %s.\n\n",
		bytesText(r.ToolList[ModeDirect]), bytesText(r.ToolList[ModeCodeMode]), bytesText(r.ToolList[ModePassthrough]))
	b.WriteString("| task | direct: received / sent / trips | code mode: received / sent / trips | passthrough: received / sent / trips | code mode vs direct (received) | answers |\n|---|---:|---:|---:|---:|---|\n")
	problems := r.Check()
	for _, t := range r.Tasks {
		res := r.Results[t.Name]
		cell := func(m ContextMode) string {
			x := res[m].Meter
			return fmt.Sprintf("%s / %s / %d", bytesText(x.Received), bytesText(x.Sent), x.RoundTrips)
		}
		d, c := res[ModeDirect].Meter.Received, res[ModeCodeMode].Meter.Received
		ratio := "—"
		switch {
		case d > 0 && c <= d:
			ratio = fmt.Sprintf("−%.0f %%", 100*float64(d-c)/float64(d))
		case d > 0:
			ratio = fmt.Sprintf("+%.0f %%", 100*float64(c-d)/float64(d))
		}
		ok := "identical"
		for _, p := range problems {
			if strings.HasPrefix(p, t.Name+",") {
				ok = "**differ**"
			}
		}
		step := ""
		if t.MultiStep {
			step = " (multi-step)"
		}
		fmt.Fprintf(&b, "| `%s`%s: %s | %s | %s | %s | %s | %s |\n", t.Name, step, mdEscape(t.What), cell(ModeDirect), cell(ModeCodeMode), cell(ModePassthrough), ratio, ok)
	}
	with, without := r.Reduction()
	fmt.Fprintf(&b, "\nOn the multi-step tasks code mode received **%.0f %% fewer bytes** than direct tool calls (%.0f %% counting the tool list each agent loads once). Goal: ≥ 90 %% with identical answers. Where the results are small to begin with (one listing, a few sums), code mode's discovery search costs more than the program saves: its gain is on tasks that read much and answer little.\n", without, with)
	if len(problems) > 0 {
		b.WriteString("\nProblems:\n")
		for _, p := range problems {
			b.WriteString("- " + mdEscape(p) + "\n")
		}
	}
	return b.String()
}

func bytesText(n int) string {
	if n < 1000 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.1f KB", float64(n)/1000)
}
