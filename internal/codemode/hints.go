package codemode

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/catalog"
	"github.com/isogate/isogate/v8sandbox"
)

// metaTools are the gateway's own MCP tools, which do not exist inside a program.
var metaTools = map[string]bool{"search_tools": true, "tool_info": true, "list_tools_meta": true,
	"call_tool_chain": true, "run_code": true, "read_result": true}

var (
	reShadow      = regexp.MustCompile(`Cannot access '([^']{1,64})' before initialization`)
	reNotDefined  = regexp.MustCompile(`ReferenceError: ([^\s]{1,64}) is not defined`)
	reNotFunction = regexp.MustCompile(`TypeError: ([A-Za-z_$][\w$]{0,63})\.([^\s]{1,64}) is not a function`)
	reReading     = regexp.MustCompile(`\(reading '([^']{1,64})'\)`)
	reDashedCall  = regexp.MustCompile(`([A-Za-z_$][\w$]*)\.([\w$]+(?:-[\w$]+)+)\s*\(`)
	reImport      = regexp.MustCompile(`(?m)^\s*import\s+[\w{*'"]|\bimport\s*\(`)
	// reEnvelopeRead is a program reading a tool result as the MCP
	// envelope (r.content[0].text, r.structuredContent.x).
	reEnvelopeRead  = regexp.MustCompile(`\.(?:content|structuredContent)\b|\[\s*["'](?:content|structuredContent)["']\s*\]`)
	reReadUndefined = regexp.MustCompile(`TypeError: Cannot read properties of (?:undefined|null) \(reading '`)
	timerNames      = map[string]bool{"setTimeout": true, "setInterval": true, "setImmediate": true, "clearTimeout": true, "clearInterval": true}
)

// hints explains the common mistakes behind a failure, one hint per line.
// It switches on the error code; for EVAL_ERROR it reads the JavaScript
// error, for backend failures the codes recorded by the run's calls. A
// detached request's hints (isogate exec) point at the terminal's
// commands, not at the gateway's resources, which end with the process.
func hints(code v8sandbox.Code, message string, req Request, v *view, calls *callTracker) []string {
	var out []string
	if code == v8sandbox.CodeEval {
		out = append(programHints(message, req), evalHints(message, req.Code, v, calls)...)
	}
	if code == v8sandbox.CodeTimeout || code == v8sandbox.CodeCancelled {
		return out // the run's own deadline: no backend is to blame
	}
	if code == v8sandbox.CodeOutputLimit {
		if req.Detached {
			out = append(out, "This result is larger than the largest the gateway returns (a quarter of "+
				"sandbox.output.result_store_bytes). Return less: filter, slice, or aggregate in the program.")
		} else {
			out = append(out, "Results up to this limit are stored whole and returned truncated with their isogate://result/{id} "+
				"(read_result pages through them); this one is larger than one session may keep (a quarter of "+
				"sandbox.output.result_store_bytes). Return less: filter, slice, or aggregate in the program.")
		}
	}
	for _, f := range calls.backendFailures() {
		state := fmt.Sprintf("read the resource isogate://backend/%s for its state", f.backend)
		if req.Detached {
			state = "`isogate doctor` connects it and reports its state"
		}
		switch f.code {
		case backend.CodeStarting:
			retry := "retry in a few seconds"
			if req.Detached {
				retry = "give it longer with --wait"
			}
			out = append(out, fmt.Sprintf("Backend `%s` has not finished connecting: %s, or %s.", f.backend, retry, state))
		case backend.CodeTimeout:
			out = append(out, fmt.Sprintf("A call to backend `%s` exceeded the backend's own per-call timeout (backends.%s.timeout), not the program's; %s.", f.backend, f.backend, state))
		case backend.CodeConnectionLost:
			if !req.Detached {
				state += " and recent errors"
			}
			out = append(out, fmt.Sprintf("The connection to backend `%s` broke while the call was in flight: "+
				"the call may or may not have run, so it was not retried. The gateway restarts the backend; "+
				"retry if the call is safe to repeat, and %s.", f.backend, state))
		case backend.CodeUnavailable, backend.CodeClosed:
			if !req.Detached {
				state += " and recent errors"
			}
			out = append(out, fmt.Sprintf("Backend `%s` is unavailable; %s.", f.backend, state))
		}
	}
	return out
}

// runHints explains a tier-3 failure from what the engine reports beyond
// its message: a deadline reached while no tool call was in flight (the
// program's own code was running), a main promise that nothing will
// settle, or a thrown value that is not an Error (no stack, no line).
// waiting names the calls in flight at the end.
func runHints(se *v8sandbox.Error, waiting string) []string {
	switch {
	case se.Code == v8sandbox.CodeTimeout && waiting == "":
		return []string{"No tool call was in flight when the deadline came: the program's own code was still running. " +
			"Look for a loop that never ends (`while (true) {}`, a condition that never changes) or for more work than the timeout allows."}
	case se.Code == v8sandbox.CodeEval && strings.HasPrefix(se.Message, neverSettles):
		return []string{"The program awaits a promise that nothing will settle: a `new Promise(...)` whose resolve is never called, " +
			"or a returned object with a `then` method. There are no timers or events in the sandbox: await tool calls directly."}
	case se.Code == v8sandbox.CodeEval && se.Stack == "" && se.Line == 0 && !se.Compile:
		return []string{"The program threw a value that is not an Error (e.g. `throw {...}` or `throw \"text\"`), " +
			"which has no stack or line number: throw `new Error(\"...\")` to see where it came from."}
	}
	return nil
}

// neverSettles begins the engine's message for a main promise that waits
// for nothing (v8sandbox's run), which also has no stack.
const neverSettles = "the main promise can never settle"

// withHints appends hints to an error text, one "Hint:" line each.
func withHints(text string, hs []string) string {
	if len(hs) == 0 {
		return text
	}
	if !strings.Contains(text, "\n\nHint: ") {
		text += "\n"
	}
	return text + "\nHint: " + strings.Join(hs, "\nHint: ")
}

func evalHints(message, src string, v *view, calls *callTracker) []string {
	idx := v.index()
	var out []string
	if m := reShadow.FindStringSubmatch(message); m != nil && idx.backend(m[1]) != "" {
		out = append(out, fmt.Sprintf("`%s` is a backend, but your code declares a variable with the same name, "+
			"which shadows it. Rename the variable, e.g. `const %sResult = await %s.<tool>({...})`.", m[1], m[1], m[1]))
	}
	if m := reNotDefined.FindStringSubmatch(message); m != nil {
		out = append(out, notDefinedHints(m[1], src, v, idx)...)
	}
	if m := reNotFunction.FindStringSubmatch(message); m != nil {
		switch b := idx.backend(m[1]); {
		case metaTools[m[2]]:
			out = append(out, metaToolHint(m[2]))
		case b != "":
			tools := idx.toolsOf[b]
			if s := catalog.Closest(m[2], tools); s != "" {
				out = append(out, fmt.Sprintf("Backend `%s` has no tool `%s`; did you mean `%s.%s`?", m[1], m[2], m[1], s))
			} else {
				out = append(out, fmt.Sprintf("Backend `%s` has no tool `%s`; its tools: %s.", m[1], m[2], listSome(tools)))
			}
		}
	} else if m := reReading.FindStringSubmatch(message); m != nil && metaTools[m[1]] {
		out = append(out, metaToolHint(m[1]))
	}
	if reReadUndefined.MatchString(message) && reEnvelopeRead.MatchString(src) && calls.count() > 0 {
		out = append(out, unwrappedHint(v, calls.first()))
	}
	if strings.Contains(message, "SyntaxError") && reImport.MatchString(src) {
		out = append(out, "Programs cannot import modules: there is no filesystem, network or package access. "+
			"Remove the import and call backend tools instead, e.g. `await backend.tool({...})`; __interfaces lists them.")
	}
	return out
}

// programHints explains a run that failed on programs.<name> where the
// caller has no program <name>: then `programs` is not defined (the run
// names no program the caller has) or has no such function. A detached
// run (isogate exec) has no saved programs at all.
func programHints(message string, req Request) []string {
	lib := req.Programs
	if req.Detached {
		if m := reNotDefined.FindStringSubmatch(message); m != nil && m[1] == "programs" {
			return []string{"`isogate exec` runs a program without saved programs (`programs` is not defined): " +
				"run their code itself, or call them through the gateway (the tool program_<name>)."}
		}
		return nil
	}
	var names []string
	if m := reNotFunction.FindStringSubmatch(message); m != nil && m[1] == "programs" {
		names = []string{m[2]}
	} else if m := reNotDefined.FindStringSubmatch(message); m != nil && m[1] == "programs" {
		if lib == nil || len(lib.Unknown) == 0 {
			return []string{"`programs` holds the saved programs you may call, and is defined when the code calls one " +
				"as programs.<name>(args) (or programs[\"name\"](args)); the programs tool lists them."}
		}
		names = lib.Unknown
	} else {
		return nil
	}
	var callable []string
	if lib != nil {
		callable = lib.Callable
	}
	var out []string
	for _, name := range names {
		h := fmt.Sprintf("You have no saved program `%s` to call", name)
		base, _, _ := strings.Cut(name, "@")
		switch s := catalog.Closest(base, callable); {
		case s != "":
			h += fmt.Sprintf("; did you mean `programs.%s`? The programs tool lists the programs you may call.", s)
		case len(callable) > 0:
			h += fmt.Sprintf("; yours: %s (the programs tool lists them).", listSome(callable))
		default:
			h += ": you may call no saved program yet (save_program saves one)."
		}
		out = append(out, h)
	}
	return out
}

func notDefinedHints(name, src string, v *view, idx *nameIndex) []string {
	switch {
	case metaTools[name]:
		return []string{metaToolHint(name)}
	case name == "fetch" || name == "XMLHttpRequest" || name == "WebSocket":
		return []string{"Programs have no network access (`" + name + "` does not exist). Call a backend tool that fetches, e.g. search_tools for \"fetch\" or \"http\", then `await backend.tool({...})`."}
	case timerNames[name]:
		return []string{"There are no timers (`" + name + "`) in the sandbox. Await tool calls directly; to run calls concurrently use `await Promise.all([...])`."}
	case name == "process" || name == "Buffer" || name == "module" || name == "__dirname":
		return []string{"Programs have no Node.js globals (`" + name + "`): no modules, filesystem, environment or process access. Call backend tools instead."}
	}
	for _, m := range reDashedCall.FindAllStringSubmatch(src, 8) {
		parts := strings.Split(m[2], "-")
		if parts[len(parts)-1] != name {
			continue
		}
		if t := v.backend(m[1]).tool(m[2]); t != nil {
			return []string{fmt.Sprintf("`%s.%s(...)` is read by JavaScript as a subtraction. Write `%s[%q]({...})` or `%s.%s({...})`.",
				m[1], m[2], m[1], m[2], m[1], t.NameIdent)}
		}
	}
	if owners := idx.toolOwners(name); len(owners) > 0 {
		h := fmt.Sprintf("`%s` may be a tool; call it as %s.%s({...})", name, owners[0], name)
		if len(owners) > 1 {
			h += fmt.Sprintf(" (also on: %s)", listSome(owners[1:]))
		}
		return []string{h}
	}
	if s := catalog.Closest(name, idx.backendIdents); s != "" {
		return []string{fmt.Sprintf("There is no backend `%s`; did you mean `%s`? Backends: %s.", name, s, listSome(idx.backendIdents))}
	}
	return nil
}

// unwrappedHint explains that a tool call's value is not the MCP result
// envelope (no content[0].text): see ToolValue.
func unwrappedHint(v *view, tool string) string {
	call := "backend.tool"
	if tool != "" {
		call = v.callName(tool)
	}
	return fmt.Sprintf("A tool call in a program returns its result already unwrapped, not the MCP envelope: "+
		"`const r = await %s({...})` is the tool's structuredContent when it has one, else its text "+
		"(parsed as JSON when it is JSON; several content blocks are an array), so there is no `r.content[0].text` "+
		"or `r.structuredContent`: use `r` itself (e.g. `return r`, `r.someField`).", call)
}

func metaToolHint(name string) string {
	return fmt.Sprintf("`%s` is an MCP tool of the gateway, not a function inside the sandbox: "+
		"call it as a separate MCP tool call. Inside a program, call backend tools as backend.tool({...}).", name)
}

// listSome joins names, at most 20 of them.
func listSome(names []string) string {
	if len(names) > 20 {
		return strings.Join(names[:20], ", ") + fmt.Sprintf(", … (%d more)", len(names)-20)
	}
	return strings.Join(names, ", ")
}

// nameIndex answers name questions about a catalogue snapshot.
type nameIndex struct {
	backendIdents []string            // sorted sanitized backend names
	byName        map[string]string   // backend ident or original → ident
	toolsOf       map[string][]string // backend ident → tool idents
	owners        map[string][]string // tool ident or original → backend idents
}

func newNameIndex(tools []Tool, backends []*backendView) *nameIndex {
	idx := &nameIndex{byName: map[string]string{}, toolsOf: map[string][]string{}, owners: map[string][]string{}}
	for _, b := range backends {
		id := b.Ident
		if id == "" {
			id = b.Name
		}
		idx.backendIdents = append(idx.backendIdents, id)
		idx.byName[id], idx.byName[b.Name] = id, id
	}
	for _, t := range tools {
		idx.toolsOf[t.BackendIdent] = append(idx.toolsOf[t.BackendIdent], t.NameIdent)
		idx.owners[t.NameIdent] = append(idx.owners[t.NameIdent], t.BackendIdent)
		if t.Name != t.NameIdent {
			idx.owners[t.Name] = append(idx.owners[t.Name], t.BackendIdent)
		}
	}
	sort.Strings(idx.backendIdents)
	return idx
}

func (n *nameIndex) backend(name string) string      { return n.byName[name] }
func (n *nameIndex) toolOwners(name string) []string { return n.owners[name] }
