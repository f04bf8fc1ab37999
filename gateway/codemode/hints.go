package codemode

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/isogate/isogate/gateway/catalog"
)

// metaTools are the gateway's own MCP tools, which do not exist inside a program.
var metaTools = map[string]bool{"search_tools": true, "tool_info": true, "list_tools_meta": true, "call_tool_chain": true, "run_code": true}

var (
	reShadow      = regexp.MustCompile(`Cannot access '([^']+)' before initialization`)
	reNotDefined  = regexp.MustCompile(`ReferenceError: (\S+) is not defined`)
	reNotFunction = regexp.MustCompile(`TypeError: ([A-Za-z_$][\w$]*)\.(\S+) is not a function`)
	reBackend     = regexp.MustCompile(`backend "([^"]+)"`)
	reStarting    = regexp.MustCompile(`backend "([^"]+)" is still starting`)
)

// hints explains the common mistakes behind an error message, one hint per line.
func hints(message string, tools []Tool) []string {
	idx := newNameIndex(tools)
	var out []string
	if m := reShadow.FindStringSubmatch(message); m != nil && idx.backend(m[1]) != "" {
		out = append(out, fmt.Sprintf("`%s` is a backend, but your code declares a variable with the same name, "+
			"which shadows it. Rename the variable, e.g. `const %sResult = await %s.<tool>({...})`.", m[1], m[1], m[1]))
	}
	if m := reNotDefined.FindStringSubmatch(message); m != nil {
		name := m[1]
		switch {
		case metaTools[name]:
			out = append(out, fmt.Sprintf("`%s` is an MCP tool of the gateway, not a function inside the sandbox: "+
				"call it as a separate MCP tool call. Inside a program, call backend tools as backend.tool({...}).", name))
		case len(idx.toolOwners(name)) > 0:
			owners := idx.toolOwners(name)
			out = append(out, fmt.Sprintf("`%s` may be a tool; call it as %s.%s({...})", name, owners[0], name))
			if len(owners) > 1 {
				out[len(out)-1] += fmt.Sprintf(" (also on: %s)", strings.Join(owners[1:], ", "))
			}
		default:
			if s := closest(name, idx.backendIdents); s != "" {
				out = append(out, fmt.Sprintf("There is no backend `%s`; did you mean `%s`? Backends: %s.", name, s, strings.Join(idx.backendIdents, ", ")))
			}
		}
	}
	if m := reNotFunction.FindStringSubmatch(message); m != nil {
		if b := idx.backend(m[1]); b != "" {
			tools := idx.toolsOf[b]
			if s := closest(m[2], tools); s != "" {
				out = append(out, fmt.Sprintf("Backend `%s` has no tool `%s`; did you mean `%s.%s`?", m[1], m[2], m[1], s))
			} else {
				out = append(out, fmt.Sprintf("Backend `%s` has no tool `%s`; its tools: %s.", m[1], m[2], strings.Join(tools, ", ")))
			}
		}
	}
	if m := reStarting.FindStringSubmatch(message); m != nil {
		out = append(out, fmt.Sprintf("Backend `%s` is listed from the cache but has not connected yet: retry in a few "+
			"seconds, or read the resource isogate://backend/%s for its state.", m[1], m[1]))
	} else if m := reBackend.FindStringSubmatch(message); m != nil && !strings.Contains(message, " failed: ") {
		out = append(out, fmt.Sprintf("Backend `%s` is unavailable; read the resource isogate://backend/%s for its state and recent errors.", m[1], m[1]))
	}
	return out
}

// nameIndex answers name questions about a catalogue snapshot.
type nameIndex struct {
	backendIdents []string            // sorted sanitized backend names
	byName        map[string]string   // backend ident or original → ident
	toolsOf       map[string][]string // backend ident → tool idents
	owners        map[string][]string // tool ident or original → backend idents
}

func newNameIndex(tools []Tool) *nameIndex {
	idx := &nameIndex{byName: map[string]string{}, toolsOf: map[string][]string{}, owners: map[string][]string{}}
	for _, t := range tools {
		if _, seen := idx.toolsOf[t.BackendIdent]; !seen {
			idx.backendIdents = append(idx.backendIdents, t.BackendIdent)
		}
		idx.byName[t.BackendIdent], idx.byName[t.Backend] = t.BackendIdent, t.BackendIdent
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

// closest returns the candidate nearest to name (edit distance ≤ 2, or a
// prefix of it either way), or "".
func closest(name string, candidates []string) string {
	best, bestDist := "", 3
	lname := strings.ToLower(name)
	for _, c := range candidates {
		lc := strings.ToLower(c)
		d := catalog.EditDistance(lname, lc)
		if d > 0 && len(lname) >= 3 && (strings.HasPrefix(lc, lname) || strings.HasPrefix(lname, lc)) {
			d = min(d, 1)
		}
		if d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}
