package catalog

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Text renders the info compactly for an agent: name and title, signature,
// description, one line per parameter, example, tags and, at full detail,
// the raw schemas.
func (ti *ToolInfo) Text() string {
	var b strings.Builder
	b.WriteString(ti.Name)
	if ti.Title != "" {
		b.WriteString(" — ")
		b.WriteString(ti.Title)
	}
	b.WriteString("\n")
	b.WriteString(ti.Signature)
	b.WriteString("\n")
	if ti.Description != "" {
		b.WriteString(ti.Description)
		b.WriteString("\n")
	}
	if ti.Declarations != "" {
		b.WriteString("TypeScript:\n")
		b.WriteString(ti.Declarations)
	}
	if len(ti.Parameters) > 0 {
		b.WriteString("Parameters:\n")
		for _, p := range ti.Parameters {
			fmt.Fprintf(&b, "- %s: %s", p.Name, p.Type)
			if p.Required {
				b.WriteString(" (required)")
			}
			if p.Description != "" {
				b.WriteString(" — ")
				b.WriteString(oneLine(p.Description))
			}
			if p.Default != nil {
				b.WriteString(" [default ")
				b.Write(p.Default)
				b.WriteString("]")
			}
			b.WriteString("\n")
		}
	}
	b.WriteString("Example: ")
	b.WriteString(ti.Example)
	b.WriteString("\n")
	if len(ti.Tags) > 0 {
		b.WriteString("Tags: ")
		b.WriteString(strings.Join(ti.Tags, ", "))
		b.WriteString("\n")
	}
	if ti.Full {
		if a := ti.Annotations; a != nil {
			var hints []string
			if a.ReadOnlyHint {
				hints = append(hints, "read-only")
			}
			if a.DestructiveHint != nil && *a.DestructiveHint && !a.ReadOnlyHint {
				hints = append(hints, "destructive")
			}
			if a.IdempotentHint {
				hints = append(hints, "idempotent")
			}
			if a.OpenWorldHint != nil && *a.OpenWorldHint {
				hints = append(hints, "open-world")
			}
			if len(hints) > 0 {
				b.WriteString("Hints: ")
				b.WriteString(strings.Join(hints, ", "))
				b.WriteString("\n")
			}
		}
		if ti.InputSchema != nil {
			b.WriteString("Input schema: ")
			b.Write(ti.InputSchema)
			b.WriteString("\n")
		}
		if ti.OutputSchema != nil {
			b.WriteString("Output schema: ")
			b.Write(ti.OutputSchema)
			b.WriteString("\n")
		}
	}
	return b.String()
}

// Text renders search results compactly for an agent: a header line, then
// per hit "name — summary" and (unless brief) its example call, then any
// corrections, and the words that matched nothing when nothing was found.
func (r SearchResult) Text() string {
	var b strings.Builder
	switch {
	case len(r.Hits) == 0:
		fmt.Fprintf(&b, "No tools match %s", strconv.Quote(r.Query))
	case strings.TrimSpace(r.Query) == "":
		b.WriteString(count(r.Total, "tool"))
	case r.Total == 1:
		fmt.Fprintf(&b, "1 tool matches %s", strconv.Quote(r.Query))
	default:
		fmt.Fprintf(&b, "%d tools match %s", r.Total, strconv.Quote(r.Query))
	}
	if r.Tag != "" {
		fmt.Fprintf(&b, " with tag %s", strconv.Quote(r.Tag))
	}
	if len(r.Hits) > 0 && len(r.Hits) < r.Total {
		fmt.Fprintf(&b, " (top %d)", len(r.Hits))
	}
	b.WriteString("\n")
	for _, h := range r.Hits {
		b.WriteString(h.Name)
		if h.Summary != "" {
			b.WriteString(" — ")
			b.WriteString(h.Summary)
		}
		b.WriteString("\n")
		if h.Signature != "" {
			b.WriteString("  ")
			b.WriteString(h.Signature)
			b.WriteString("\n")
		}
		if h.Example != "" {
			b.WriteString("  ")
			b.WriteString(h.Example)
			b.WriteString("\n")
		}
	}
	// The backends of the hits, with their descriptions: what tells two
	// backends with the same tools apart.
	var described []string
	for _, h := range r.Hits {
		if line := h.Backend + " — " + h.BackendDescription; h.BackendDescription != "" && !slices.Contains(described, line) {
			described = append(described, line)
		}
	}
	if len(described) > 0 {
		slices.Sort(described)
		b.WriteString("Backends:\n")
		for _, line := range described {
			b.WriteString("- " + line + "\n")
		}
	}
	if len(r.Corrections) > 0 {
		parts := make([]string, len(r.Corrections))
		for i, c := range r.Corrections {
			parts[i] = c.From + " → " + c.To
		}
		b.WriteString("Corrected: ")
		b.WriteString(strings.Join(parts, ", "))
		b.WriteString("\n")
	}
	// The words that matched nothing are said only when nothing was found:
	// under hits that answer the query they read as a failure (issue 43).
	if len(r.Unmatched) > 0 && len(r.Hits) == 0 {
		b.WriteString("No match for: ")
		for i, w := range r.Unmatched {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(escapeWord(w))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// escapeWord writes a query word the way the header line quotes the query
// (Go escapes for control characters, quotes and invalid UTF-8), without the
// surrounding quotes: the word is echoed from the caller and must not put raw
// control characters into the text.
func escapeWord(w string) string {
	q := strconv.Quote(w)
	return q[1 : len(q)-1]
}

// Index renders a compact index of every tool, one "backend.tool — summary"
// line each, sorted by name, suitable for an isogate://tools resource.
func (c *Catalog) Index() string {
	s := c.snap.Load()
	var b strings.Builder
	for _, e := range s.entries {
		b.WriteString(e.Name)
		if e.Summary != "" {
			b.WriteString(" — ")
			b.WriteString(e.Summary)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// oneLine collapses whitespace so a text fits on one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// count writes n with noun, singular for one: "1 tool", "3 tools".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
