package codemode

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/evanw/esbuild/pkg/api"

	"github.com/isogate/isogate/internal/catalog"
	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/typecheck"
	"github.com/isogate/isogate/v8sandbox"
)

// Saved programs inside programs (issue 45): `await programs.name(args)`
// calls a saved program as an async function. The caller (the surface)
// resolves the programs a run names into a [Library]; the engine inlines
// them into the run: each is an async function of the run's script, over
// the same bridge, so the run's journal, record, policy, tool-call budget,
// timeout and heap cover its calls once, as if the code were the run's
// own. Each program sees as `programs` only the programs its own code
// names (the library is acyclic and bounded in depth by the caller), so a
// run cannot recurse through them. The checker sees `programs` typed from
// their parameters (a certain mistake in a call refuses the run in strict
// mode, as a tool call's does), and the run's plan holds, at each call of
// a program, the tools that program may call.

// programsInterface is the checker's type of the `programs` object: a
// backend's interface by its prefix, so that its calls are checked and
// planned as tool calls are (planOf then puts the program's own plan in
// their place).
const programsInterface = BackendTypePrefix + "programs"

// programsFunc is the global function of a run's script that returns the
// run's programs object.
const programsFunc = "__isogate_programs"

// Library is the saved programs a run may call as programs.<name>(args).
type Library struct {
	// Roots are the programs the run's own code names: its `programs`.
	Roots []string
	// Programs are every program of the library, by name: the roots and
	// the programs they name, transitively.
	Programs map[string]*LibraryProgram
	// Unknown are the names the run's code calls as programs.<name> that
	// the caller has no program of (nothing is defined for them), and
	// Callable the programs the caller may call: what the hint of a run
	// that fails on such a name offers instead. Set only with Unknown.
	Unknown, Callable []string
}

// LibraryProgram is one saved program of a [Library].
type LibraryProgram struct {
	Name string // its name: programs.<Name>
	Ref  string // name@version, for messages
	Code string // the saved code, which reads its arguments from args
	// Params is the JSON Schema of its arguments (typed for the checker).
	Params []byte
	// Calls are the programs of the library its code names.
	Calls []string
	// Plan is its own plan (the tools its code calls), nil if unknown.
	Plan *pipeline.Plan
	// DeniedBy, when set, is the rule that denies the program to the
	// caller: it is in the library so that a call of it fails (and a plan
	// that names it is refused), never runs.
	DeniedBy string
}

// Empty reports whether a run has no programs to call.
func (l *Library) Empty() bool { return l == nil || len(l.Roots) == 0 }

// checkerDeclarations are appended to a program for the checker (after
// it: the program's lines stay as written): `programs` typed with the
// roots' parameters.
func (l *Library) checkerDeclarations() string {
	if l.Empty() {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n;var programs: " + programsInterface + ";\ninterface " + programsInterface + " {\n")
	for _, name := range l.Roots {
		p := l.Programs[name]
		if p == nil || p.DeniedBy != "" {
			continue // a denied program is no member: its calls are unknown (and the plan says why)
		}
		t, optional := "any", true
		if len(p.Params) > 0 {
			t, optional = catalog.ArgsType(p.Params)
		}
		q := "?"
		if !optional {
			q = ""
		}
		fmt.Fprintf(&b, "  %s(args%s: %s): Promise<any>;\n", memberName(name), q, t)
	}
	b.WriteString("}\n")
	return b.String()
}

// addToPlan puts into plan, for one call of a program the checker found,
// the tools that program may call: each at the call's line, in a loop when
// the call or the program's own call is; the tools of programs it calls in
// turn "unknown" (how often it calls them is not known). A denied program
// is a denied tool of "programs"; an unknown one, an unknown tool.
func (l *Library) addToPlan(plan *pipeline.Plan, c typecheck.PlannedCall) {
	p := l.Programs[c.Tool]
	switch {
	case p == nil:
		plan.Add("programs", c.Tool, c.Line, c.Loop, c.Times, true)
		return
	case p.DeniedBy != "":
		plan.AddDenied("programs", c.Tool, p.DeniedBy, c.Line, c.Loop, c.Times)
		return
	}
	seen := map[string]bool{}
	var walk func(p *LibraryProgram, loop string, times int)
	walk = func(p *LibraryProgram, loop string, times int) {
		if seen[p.Name] {
			return
		}
		seen[p.Name] = true
		if p.Plan != nil {
			plan.Partial = plan.Partial || p.Plan.Partial
			for _, t := range p.Plan.Tools {
				l, n := worse(loop, t.Loop), 0
				if l == "no" {
					n = max(times, 1) * max(t.Calls, 1)
				}
				if t.DeniedBy != "" {
					plan.AddDenied(t.Backend, t.Tool, t.DeniedBy, c.Line, l, n)
				} else {
					plan.Add(t.Backend, t.Tool, c.Line, l, n, t.Unknown)
				}
			}
		} else {
			plan.Partial = true
		}
		for _, name := range p.Calls {
			if q := l.Programs[name]; q != nil {
				if q.DeniedBy != "" {
					plan.AddDenied("programs", name, q.DeniedBy, c.Line, "unknown", 0)
					continue
				}
				walk(q, "unknown", 0)
			}
		}
	}
	walk(p, c.Loop, c.Times)
}

// worse is the worse of two loop verdicts ("yes" worse than "unknown",
// worse than "no").
func worse(a, b string) string {
	rank := map[string]int{"no": 0, "unknown": 1, "yes": 2}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

// script is the library's part of a run's script: the global function
// that returns the run's `programs` (its roots), and one async function
// per program, whose own `programs` are the programs it names. The
// programs' code is compiled once per version (compiledPrograms).
func (l *Library) script() (string, []librarySpan, error) {
	var b strings.Builder
	var spans []librarySpan
	names := make([]string, 0, len(l.Programs))
	for name := range l.Programs {
		names = append(names, name)
	}
	slices.Sort(names)
	b.WriteString("\n;function " + programsFunc + "() { return " + table(l.Roots) + "; }\n")
	for _, name := range names {
		p := l.Programs[name]
		if p.DeniedBy != "" {
			fmt.Fprintf(&b, "async function %s() { throw new Error(%q); }\n", programFunc(name),
				fmt.Sprintf("TOOL_DENIED: programs.%s is denied by %s", name, p.DeniedBy))
			continue
		}
		fn, err := compiledPrograms.get(p)
		if err != nil {
			return "", nil, err
		}
		// The program's own code declares what it likes (even a programs of
		// its own): it runs in a function of its own below this scope.
		head := fmt.Sprintf("async function %s(args = {}) { const programs = %s; return await (", programFunc(name), table(p.Calls))
		first := strings.Count(b.String(), "\n") + 1
		spans = append(spans, librarySpan{ref: p.Ref, first: first, last: first + strings.Count(fn.fn, "\n"), column: len(head), pos: fn.pos, lines: fn.lines})
		b.WriteString(head + fn.fn + ")(); }\n")
	}
	return b.String(), spans, nil
}

// librarySpan is where a saved program's function is in the library's
// script: lines first to last (1-based, in the script), its first line
// from byte column (0-based) on.
type librarySpan struct {
	ref         string
	first, last int
	column      int
	pos         *program
	lines       int // the saved code's: a position past them is the wrapper's
}

// programFunc is the script's function of program name (a name, or a
// name pinned to a version, name@3).
func programFunc(name string) string {
	return "__isogate_program_" + strings.ReplaceAll(name, "@", "_v")
}

// memberName is name as a property name: quoted when pinned (name@3).
func memberName(name string) string {
	if strings.Contains(name, "@") {
		return strconv.Quote(name)
	}
	return name
}

// table is the frozen object of the named programs' functions.
func table(names []string) string {
	parts := make([]string, 0, len(names))
	for _, n := range names {
		parts = append(parts, memberName(n)+": "+programFunc(n))
	}
	return "Object.freeze({" + strings.Join(parts, ", ") + "})"
}

// withLibrary is a compiled program's script with the library linked in:
// `programs` declared on the wrapper's first line (no line of the user's
// code moves), a global lexical binding and not a property of globalThis
// (a saved program reaches only the programs its own code names), and the
// library's functions after the script.
func withLibrary(js string, lib *Library) (string, error) {
	if lib.Empty() {
		return js, nil
	}
	s, _, err := lib.script()
	if err != nil {
		return "", err
	}
	return "const programs = " + programsFunc + "(); " + js + s, nil
}

// codeProgramInvalid (programs.CodeInvalid) is the code of a run that
// calls a saved program whose code cannot be made a function (a module,
// which exports its entry point, or code esbuild refuses).
const codeProgramInvalid v8sandbox.Code = "PROGRAM_INVALID"

// programCache keeps each saved program version's compiled function: a
// program called by many runs is transformed once (issue 45: compile
// once per version).
type programCache struct {
	mu sync.Mutex
	m  map[string]*compiled // name@version + sha256 of the code → the function
}

// compiled is a saved program's function expression and how its lines map
// back to the saved code (pos: its lines are those of pos's js).
type compiled struct {
	fn    string
	pos   *program
	lines int // the saved code's
}

// compiledPrograms is the process's cache of compiled saved programs.
var compiledPrograms = &programCache{m: map[string]*compiled{}}

// maxCachedPrograms bounds the cache: past it, it starts again empty.
const maxCachedPrograms = 1024

// get returns p's code as a function expression of no parameters (args
// is the enclosing function's): its last expression is its value, as in a
// run, and TypeScript is stripped.
func (c *programCache) get(p *LibraryProgram) (*compiled, error) {
	sum := sha256.Sum256([]byte(p.Code))
	key := p.Ref + "/" + hex.EncodeToString(sum[:])
	c.mu.Lock()
	fn, ok := c.m[key]
	c.mu.Unlock()
	if ok {
		return fn, nil
	}
	fn, err := compileProgram(p.Ref, stripFences(p.Code))
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if len(c.m) >= maxCachedPrograms {
		c.m = map[string]*compiled{}
	}
	c.m[key] = fn
	c.mu.Unlock()
	return fn, nil
}

// compileProgram compiles a saved program's code into a function
// expression of no parameters. A module (it exports its entry point, as
// call_tool_chain code may) is compiled as CommonJS inside the function,
// whose entry point is then called with args (or is the value when it is
// no function).
func compileProgram(ref, code string) (*compiled, error) {
	if exportsMain(code) {
		res := api.Transform(code, api.TransformOptions{
			Loader: api.LoaderTS, Target: api.ES2022, Format: api.FormatCommonJS, Charset: api.CharsetUTF8,
			Sourcemap: api.SourceMapExternal, Sourcefile: origin,
		})
		if len(res.Errors) > 0 {
			return nil, v8sandbox.Errorf(codeProgramInvalid, "%s does not compile: %s", ref, compileError(res.Errors, 0, code))
		}
		fn := "(async () => {\nconst module = { exports: {} }; const exports = module.exports;\n" + string(res.Code) +
			"\nconst m = module.exports; const entry = m.default !== undefined ? m.default : m.main;\n" +
			"return typeof entry === \"function\" ? await entry(args) : entry;\n})"
		return &compiled{fn: fn, pos: &program{lineShift: -2, sourceMap: res.Map}, lines: strings.Count(code, "\n") + 1}, nil
	}
	body, _, at := withResultAt(code)
	res := api.Transform("(async () => {\n"+body+"\n})", api.TransformOptions{
		Loader: api.LoaderTS, Target: api.ES2022, Charset: api.CharsetUTF8,
		Sourcemap: api.SourceMapExternal, Sourcefile: origin,
	})
	if len(res.Errors) > 0 {
		return nil, v8sandbox.Errorf(codeProgramInvalid, "%s does not compile: %s", ref, compileError(res.Errors, 1, code))
	}
	pos := &program{lineShift: 1, sourceMap: res.Map}
	if at >= 0 {
		pos.prefixLine = strings.Count(code[:at], "\n") + 1
		pos.prefixColumn = at - strings.LastIndex(code[:at], "\n")
	}
	return &compiled{fn: strings.TrimSuffix(strings.TrimSpace(string(res.Code)), ";"), pos: pos, lines: strings.Count(code, "\n") + 1}, nil
}

// locate maps a position (1-based line and column) of the script
// withLibrary made of js and lib to the saved program whose code it is
// in: its reference and the line and column in its saved code.
func (l *Library) locate(js string, line, column int) (ref string, ul, uc int, ok bool) {
	if l.Empty() || line <= 0 {
		return "", 0, 0, false
	}
	_, spans, err := l.script() // compiled once per version: the cache answers
	if err != nil {
		return "", 0, 0, false
	}
	line -= strings.Count(js, "\n") // the script starts on js's last line
	for _, sp := range spans {
		if line < sp.first || line > sp.last {
			continue
		}
		if line == sp.first {
			column -= sp.column
		}
		if ul, uc, ok = sp.pos.position(line-sp.first+1, column); ok && ul <= sp.lines {
			return sp.ref, ul, uc, true
		}
		return "", 0, 0, false
	}
	return "", 0, 0, false
}
