package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// Variant is one engine configuration able to run every workload.
// Implementations are safe for concurrent use.
type Variant interface {
	// Name is the short identifier used in tables ("v8-pool", "goja-sync"…).
	Name() string
	// Run runs w once and returns the JSON of its awaited result (undefined
	// becomes null). The run ends when ctx does; a run without a deadline
	// in ctx gets [DefaultTimeout].
	Run(ctx context.Context, w *Workload) (json.RawMessage, error)
	// Close releases the variant's isolates, processes or goroutines.
	Close()
}

// DefaultTimeout bounds a run whose context has no deadline.
const DefaultTimeout = 30 * time.Second

// Tool is a host function visible to a workload's script as a global
// function of the same name. The script calls it with any arguments; Call
// receives them as a JSON array and returns a JSON result. Latency is
// slept (honouring the run's context) before Call runs, to simulate a
// remote tool.
type Tool struct {
	Name    string
	Latency time.Duration
	// Call must be safe for concurrent use. A nil result is undefined.
	Call func(args json.RawMessage) (json.RawMessage, error)
}

// invoke simulates the tool's latency, then calls it.
func (t *Tool) invoke(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	if t.Latency > 0 {
		timer := time.NewTimer(t.Latency)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return nil, ctx.Err()
		}
	}
	return t.Call(args)
}

// Kinds of workload, for the headline.
const (
	// KindCompute is JavaScript work: the engine's execution speed.
	KindCompute = "compute"
	// KindOverhead is the fixed cost of a run or of a host call.
	KindOverhead = "overhead"
	// KindIO waits on host calls with latency: concurrency of the bridge.
	KindIO = "tool I/O"
)

// Workload is a script plus the host functions it may call.
type Workload struct {
	// Name identifies the workload in tables and benchmark names.
	Name string
	// Description is one line for the report.
	Description string
	// Kind groups workloads in the headline: [KindCompute],
	// [KindOverhead] or [KindIO] (empty: reported ungrouped).
	Kind string
	// Source is the body of an async function: it may await and must
	// return the result. TypeScript syntax is allowed unless Raw is set.
	Source string
	// Raw skips esbuild: the body is wrapped as is, so the engine sees the
	// exact syntax (used by the conformance checks).
	Raw bool
	// Tools are the host functions installed for the run.
	Tools []Tool
	// Want is the expected result as JSON; Check compares semantically.
	Want string
	// Heavy marks workloads skipped by tests under -race or -short.
	Heavy bool

	// script, when set, is run verbatim instead of Source (a script whose
	// completion value is the main promise).
	script string

	once  sync.Once
	tools map[string]*Tool
}

// tool returns the tool called name, or nil.
func (w *Workload) tool(name string) *Tool {
	w.once.Do(func() {
		w.tools = make(map[string]*Tool, len(w.Tools))
		for i := range w.Tools {
			w.tools[w.Tools[i].Name] = &w.Tools[i]
		}
	})
	return w.tools[name]
}

// callTool runs the named tool, as every variant's bridge does.
func (w *Workload) callTool(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	t := w.tool(name)
	if t == nil {
		return nil, fmt.Errorf("unknown host function %q", name)
	}
	return t.invoke(ctx, args)
}

// toolNames returns the names of the workload's tools in order.
func (w *Workload) toolNames() []string {
	names := make([]string, len(w.Tools))
	for i, t := range w.Tools {
		names[i] = t.Name
	}
	return names
}

// Check reports whether got is the expected result (compared as JSON
// values, so key order and spacing do not matter).
func (w *Workload) Check(got json.RawMessage) error {
	if w.Want == "" {
		return nil
	}
	var a, b any
	if err := json.Unmarshal(got, &a); err != nil {
		return fmt.Errorf("%s: result is not JSON: %v", w.Name, err)
	}
	if err := json.Unmarshal([]byte(w.Want), &b); err != nil {
		return fmt.Errorf("%s: Want is not JSON: %v", w.Name, err)
	}
	ca, _ := json.Marshal(a)
	cb, _ := json.Marshal(b)
	if string(ca) != string(cb) {
		return fmt.Errorf("%s: got %s, want %s", w.Name, truncate(string(got), 200), w.Want)
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// withDefaultTimeout gives ctx a deadline when it has none.
func withDefaultTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, DefaultTimeout)
}

// VariantSpec describes a variant that the report and the tests build.
type VariantSpec struct {
	// Name must equal the built variant's Name().
	Name string
	// Label is one line for the report.
	Label string
	// Order sorts variants in tables (lower first); the built-in ones use
	// 10 (v8-pool, the baseline) to 50.
	Order int
	// New builds the variant. Workers is the number of isolates a pooled
	// variant may use (the highest concurrency measured); runtimes that
	// are created per run ignore it. An error means "not available here"
	// and is reported, not fatal.
	New func(cfg VariantConfig) (Variant, error)
}

// VariantConfig is what a [VariantSpec] needs to build its variant.
type VariantConfig struct {
	// Workers is the pool size of pooled variants.
	Workers int
	// WorkerCommand is the command of sandbox worker processes, for
	// process-isolated variants (nil: the variant's default).
	WorkerCommand []string
}

var (
	registryMu sync.Mutex
	variants   []VariantSpec
	workloads  []*Workload
	sections   []Section
)

// RegisterVariant adds a variant to those measured by the report and the
// tests, or replaces the one of the same name. Variants are listed by
// Order; [Baseline] ("v8-pool") is the reference of every ratio.
func RegisterVariant(s VariantSpec) {
	registryMu.Lock()
	defer registryMu.Unlock()
	for i, v := range variants {
		if v.Name == s.Name {
			variants[i] = s
			return
		}
	}
	variants = append(variants, s)
	sort.SliceStable(variants, func(i, j int) bool { return variants[i].Order < variants[j].Order })
}

// Variants returns the registered variants in order.
func Variants() []VariantSpec {
	registryMu.Lock()
	defer registryMu.Unlock()
	return append([]VariantSpec(nil), variants...)
}

// builtinsOnce puts the built-in workloads first in the registry, on its
// first use rather than at package initialisation: their Want values are
// computed in Go (a 1 MB JSON document among them), which cost 120 ms of
// the start of every sandbox worker this binary runs (`bench.test
// sandbox-worker`) under -race, a process that measures no workload.
var builtinsOnce sync.Once

// registerBuiltins registers the built-in workloads once; registryMu held.
func registerBuiltins() {
	builtinsOnce.Do(func() { workloads = append(builtinWorkloads(), workloads...) })
}

// RegisterWorkload adds a workload to those measured, after the built-in
// ones.
func RegisterWorkload(w *Workload) {
	registryMu.Lock()
	defer registryMu.Unlock()
	registerBuiltins()
	workloads = append(workloads, w)
}

// Workloads returns the registered workloads in order, the built-in ones
// first.
func Workloads() []*Workload {
	registryMu.Lock()
	defer registryMu.Unlock()
	registerBuiltins()
	return append([]*Workload(nil), workloads...)
}

// Section is an extra part of the report, for measurements that do not fit
// the workload × variant grid (gateway dispatch, end-to-end MCP calls…).
type Section struct {
	// Title is the section's heading.
	Title string
	// Name is a short name for selecting the section alone
	// ([ReportConfig].Sections, benchreport -sections); optional, as a
	// section is also selected by a part of its title.
	Name string
	// Order sorts sections (lower first); ties keep registration order.
	Order int
	// OptIn keeps the section out of a report that does not select it
	// ([ReportConfig].Sections, benchreport -sections): for sections that
	// take minutes, such as the soak.
	OptIn bool
	// Run measures and returns the section's Markdown body.
	Run func(ctx context.Context, cfg ReportConfig) (string, error)
}

// RegisterSection adds a section to the report, after the built-in ones.
func RegisterSection(s Section) {
	registryMu.Lock()
	defer registryMu.Unlock()
	sections = append(sections, s)
	sort.SliceStable(sections, func(i, j int) bool { return sections[i].Order < sections[j].Order })
}

// Matches reports whether the selector sel names the section: its Name,
// or a part of its Title (case-insensitive either way).
func (s Section) Matches(sel string) bool {
	sel = strings.ToLower(strings.TrimSpace(sel))
	return sel != "" && (strings.ToLower(s.Name) == sel || strings.Contains(strings.ToLower(s.Title), sel))
}

// Sections returns the registered extra sections in order.
func Sections() []Section {
	registryMu.Lock()
	defer registryMu.Unlock()
	return append([]Section(nil), sections...)
}
