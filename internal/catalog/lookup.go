package catalog

import (
	"fmt"
	"slices"
	"strings"
)

// NotFoundError is returned by [Catalog.Lookup] and [Catalog.Info] for a
// name that matches no tool.
type NotFoundError struct {
	// Name is the name that was looked up.
	Name string
	// Suggestions are the closest existing "backend.tool" names, best first
	// (possibly none).
	Suggestions []string
}

// Error implements error.
func (e *NotFoundError) Error() string {
	if len(e.Suggestions) == 0 {
		return fmt.Sprintf("unknown tool %q; use search_tools to find tools", e.Name)
	}
	return fmt.Sprintf("unknown tool %q; did you mean %s?", e.Name, strings.Join(e.Suggestions, ", "))
}

// AmbiguousError is returned by [Catalog.Lookup] and [Catalog.Info] for a
// bare tool name offered by several backends.
type AmbiguousError struct {
	// Name is the name that was looked up.
	Name string
	// Candidates are the matching "backend.tool" names, sorted.
	Candidates []string
}

// Error implements error.
func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("tool name %q is ambiguous; use one of %s", e.Name, strings.Join(e.Candidates, ", "))
}

// DeniedTool is a tool a backend offers that policy keeps out of the
// catalogue ([Catalog.SetBackendPolicy]), or out of one caller's reach.
type DeniedTool struct {
	// Backend and Tool are the original names.
	Backend string `json:"backend"`
	Tool    string `json:"tool"`
	// Rule is the configuration key that denies it:
	// "backends.<b>.tools.deny", "backends.<b>.tools.allow" (the tool is
	// outside a non-empty allow list) or "server.auth.rules.<rule>".
	Rule string `json:"rule"`
	// Pattern is the pattern of Rule that names the tool (tools.deny's);
	// "" for another rule.
	Pattern string `json:"pattern,omitempty"`
	// Description is the tool's, as its backend lists it.
	Description string `json:"description,omitempty"`
}

// Name is "backend.tool".
func (d DeniedTool) Name() string { return d.Backend + "." + d.Tool }

// Reason is the rule with what in it denies the tool, for an operator:
// "backends.memory.tools.deny: delete_*", "backends.memory.tools.allow
// does not name it", "server.auth.rules.readers".
func (d DeniedTool) Reason() string {
	switch {
	case d.Pattern != "":
		return d.Rule + ": " + d.Pattern
	case strings.HasSuffix(d.Rule, ".tools.allow"):
		return d.Rule + " does not name it"
	}
	return d.Rule
}

// DeniedError is the answer for a name that is a tool policy denies: it
// names the tool and the rule, never suggests another.
type DeniedError struct {
	// Name is the name that was looked up.
	Name string
	// Tool is the tool it names, with the rule that denies it.
	Tool DeniedTool
}

// Error implements error.
func (e *DeniedError) Error() string {
	return fmt.Sprintf("%s is denied by %s", e.Tool.Name(), e.Tool.Rule)
}

// NameKey is the form in which two spellings of one name are equal:
// hyphens and underscores are the same character ("get-env", "get_env").
func NameKey(name string) string { return strings.ReplaceAll(name, "-", "_") }

// keysOf are the NameKeys a tool is found by: qualified by the backend's
// name and by its identifier, and bare.
func keysOf(backend, tool, jsBackend string) []string {
	return []string{NameKey(backend + "." + tool), NameKey(jsBackend + "." + tool), NameKey(tool)}
}

// Options say how [Catalog.What] answers.
type Options struct {
	// Suggest: an unknown name's *NotFoundError names the closest tools
	// (an edit distance per tool: callers that must bound the work of an
	// unknown name leave it off).
	Suggest bool
	// DeniedBy, when set, is the caller's own policy on the catalogue's
	// tools (server.auth.rules): the rule that keeps backend.tool from
	// it, "" when none does. Such a tool is answered as denied, and never
	// suggested.
	DeniedBy func(backend, tool string) string
}

// maxSuggestions bounds NotFoundError.Suggestions.
const maxSuggestions = 5

// Lookup resolves a tool name, trying in order: the canonical
// "backend.tool" name, the sanitized "jsBackend.jsTool" name, a bare tool
// name and a bare sanitized tool name. A bare name must be unique across
// backends; otherwise an *AmbiguousError lists the candidates. A name that
// matches nothing yields a *NotFoundError with the closest names. It is
// [Catalog.What] with suggestions.
func (c *Catalog) Lookup(name string) (*Entry, error) {
	return c.snap.Load().what(name, Options{Suggest: true})
}

// Resolve is Lookup without the search for suggestions (a *NotFoundError
// has none): for callers that must bound the work an unknown name costs,
// such as a program looking up names in a loop.
func (c *Catalog) Resolve(name string) (*Entry, error) {
	return c.snap.Load().what(name, Options{})
}

// What is the one answer to "what is this name?", which code mode's
// bridge, the type check's plan, tool_info, search and passthrough share.
// A name is, in this order:
//   - a tool: its entry (any form Lookup accepts);
//   - a tool policy denies: a *DeniedError naming the tool and the rule
//     (backends.<b>.tools.deny or .allow, or, through opts.DeniedBy, a
//     server.auth.rules entry);
//   - an ambiguous bare name: an *AmbiguousError listing its prefixed
//     forms;
//   - unknown: a *NotFoundError, with opts.Suggest the closest tools the
//     caller may call (never a denied one).
//
// The hyphen and underscore spellings of a name are the same name
// ([NameKey]): exact spellings are tried first, then the NameKey.
func (c *Catalog) What(name string, opts Options) (*Entry, error) {
	return c.snap.Load().what(name, opts)
}

func (s *snapshot) what(name string, opts Options) (*Entry, error) {
	e, err := s.find(name)
	if err != nil {
		return nil, err
	}
	if e == nil {
		nf := &NotFoundError{Name: name}
		if opts.Suggest {
			nf.Suggestions = s.suggest(name, opts.DeniedBy)
		}
		return nil, nf
	}
	if opts.DeniedBy != nil {
		if rule := opts.DeniedBy(e.Backend, e.Tool); rule != "" {
			return nil, &DeniedError{Name: name, Tool: DeniedTool{Backend: e.Backend, Tool: e.Tool, Rule: rule}}
		}
	}
	return e, nil
}

// find is what without a caller's rules: the entry, a *DeniedError or an
// *AmbiguousError; nil, nil when nothing matches.
func (s *snapshot) find(name string) (*Entry, error) {
	for _, m := range []map[string][]*Entry{s.byName, s.byJSName, s.byTool, s.byJSTool} {
		if e, err := oneEntry(name, m[name]); e != nil || err != nil {
			return e, err
		}
	}
	if err := oneDenied(name, s.deniedByName[name]); err != nil {
		return nil, err
	}
	key := NameKey(name)
	if e, err := oneEntry(name, s.byKey[key]); e != nil || err != nil {
		return e, err
	}
	return nil, oneDenied(name, s.deniedByKey[key])
}

// oneEntry is the entry of es when there is one, an *AmbiguousError when
// there are several.
func oneEntry(name string, es []*Entry) (*Entry, error) {
	switch len(es) {
	case 0:
		return nil, nil
	case 1:
		return es[0], nil
	}
	cands := make([]string, len(es))
	for i, e := range es {
		cands[i] = e.Name
	}
	slices.Sort(cands)
	return nil, &AmbiguousError{Name: name, Candidates: slices.Compact(cands)}
}

// oneDenied is the *DeniedError of ds when there is one, an
// *AmbiguousError when there are several, nil when there are none.
func oneDenied(name string, ds []*DeniedTool) error {
	switch len(ds) {
	case 0:
		return nil
	case 1:
		return &DeniedError{Name: name, Tool: *ds[0]}
	}
	cands := make([]string, len(ds))
	for i, d := range ds {
		cands[i] = d.Name()
	}
	slices.Sort(cands)
	return &AmbiguousError{Name: name, Candidates: slices.Compact(cands)}
}

// Denied returns the tools policy keeps out of the catalogue, by backend
// and tool ([Catalog.SetBackendPolicy]).
func (c *Catalog) Denied() []DeniedTool { return slices.Clone(c.snap.Load().denied) }

// suggest returns up to maxSuggestions names close to an unknown name,
// closest first. A name is close when, case-insensitively, it is within a
// few edits of the query (as a whole, or the tool part when the query starts
// with a known backend, or the bare tool name), when the query is one of the
// words of its tool name, or when one contains the other.
func (s *snapshot) suggest(name string, deniedBy func(backend, tool string) string) []string {
	q := strings.ToLower(strings.TrimSpace(name))
	if q == "" {
		return nil
	}
	qr := []rune(q)
	qBackend, qTool, qualified := strings.Cut(q, ".")
	if !qualified {
		qTool = q
	}
	qtr := []rune(qTool)
	type cand struct {
		name string
		d    int
	}
	var cands []cand
	for _, e := range s.entries {
		if deniedBy != nil && deniedBy(e.Backend, e.Tool) != "" {
			continue
		}
		best := suggestDist + 1
		try := func(d int) { best = min(best, d) }
		edit := func(a []rune, b string) {
			budget := suggestEdits(len(a))
			if d := osaDistance(a, []rune(b), budget); d <= budget {
				try(d)
			}
		}
		edit(qr, strings.ToLower(e.Name))
		edit(qr, strings.ToLower(e.JSName))
		if !qualified || qBackend == strings.ToLower(e.Backend) || qBackend == strings.ToLower(e.JSBackend) {
			for _, f := range e.td.lowerNames {
				edit(qtr, f)
				if len(qtr) >= 3 && (strings.Contains(f, qTool) || strings.Contains(qTool, f)) {
					try(suggestDist)
				}
			}
			splitWords(e.td.lowerNames[0], func(w string) {
				if w == qTool {
					try(1)
				}
			})
		}
		if best <= suggestDist {
			cands = append(cands, cand{e.Name, best})
		}
	}
	slices.SortFunc(cands, func(a, b cand) int {
		if a.d != b.d {
			return a.d - b.d
		}
		return strings.Compare(a.name, b.name)
	})
	var out []string
	for _, c := range cands {
		if len(out) == maxSuggestions {
			break
		}
		out = append(out, c.name)
	}
	return out
}

// suggestDist is the largest distance at which a name is suggested.
const suggestDist = 3

// suggestEdits is the edit budget for a query of n runes: a third of its
// length, between 1 and suggestDist.
func suggestEdits(n int) int { return max(1, min(suggestDist, n/3)) }
