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

// maxSuggestions bounds NotFoundError.Suggestions.
const maxSuggestions = 5

// Lookup resolves a tool name, trying in order: the canonical
// "backend.tool" name, the sanitized "jsBackend.jsTool" name, a bare tool
// name and a bare sanitized tool name. A bare name must be unique across
// backends; otherwise an *AmbiguousError lists the candidates. A name that
// matches nothing yields a *NotFoundError with the closest names.
func (c *Catalog) Lookup(name string) (*Entry, error) {
	return c.snap.Load().lookup(name, true)
}

// Resolve is Lookup without the search for suggestions (a *NotFoundError
// has none): for callers that must bound the work an unknown name costs,
// such as a program looking up names in a loop.
func (c *Catalog) Resolve(name string) (*Entry, error) {
	return c.snap.Load().lookup(name, false)
}

func (s *snapshot) lookup(name string, suggest bool) (*Entry, error) {
	for _, m := range []map[string][]*Entry{s.byName, s.byJSName, s.byTool, s.byJSTool} {
		switch es := m[name]; len(es) {
		case 0:
			continue
		case 1:
			return es[0], nil
		default:
			cands := make([]string, len(es))
			for i, e := range es {
				cands[i] = e.Name
			}
			slices.Sort(cands)
			return nil, &AmbiguousError{Name: name, Candidates: slices.Compact(cands)}
		}
	}
	if !suggest {
		return nil, &NotFoundError{Name: name}
	}
	return nil, &NotFoundError{Name: name, Suggestions: s.suggest(name)}
}

// suggest returns up to maxSuggestions names close to an unknown name,
// closest first. A name is close when, case-insensitively, it is within a
// few edits of the query (as a whole, or the tool part when the query starts
// with a known backend, or the bare tool name), when the query is one of the
// words of its tool name, or when one contains the other.
func (s *snapshot) suggest(name string) []string {
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
