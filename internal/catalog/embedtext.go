package catalog

import "strings"

// maxEmbedDescription bounds the description in [Entry.EmbeddingText], in
// runes: enough for what a tool does, not a manual.
const maxEmbedDescription = 1000

// View returns the catalogue's tools (sorted by Name) and its version, read
// from one published snapshot: the version is the one of these entries.
// The slice is the caller's; the entries are shared and must not be
// modified.
func (c *Catalog) View() (entries []*Entry, version uint64) {
	s := c.snap.Load()
	return append([]*Entry(nil), s.entries...), s.version
}

// EmbeddingText is what describes the tool to an embedding model, and all
// that is sent of it: its name (backend.tool), title, description (whitespace
// collapsed, at most 1 000 runes), the backend's configured description and
// the names of its top-level parameters, one per line. Argument values,
// schemas' other contents and tags are not part of it.
func (e *Entry) EmbeddingText() string {
	var b strings.Builder
	b.WriteString(e.Name)
	def := e.td.def
	if t := oneLine(def.Title); t != "" {
		b.WriteString("\n" + t)
	}
	if d := oneLine(def.Description); d != "" {
		b.WriteString("\n" + clipRunes(d, maxEmbedDescription))
	}
	if e.BackendDescription != "" {
		b.WriteString("\nbackend: " + e.BackendDescription)
	}
	if len(e.td.params) > 0 {
		names := make([]string, len(e.td.params))
		for i, p := range e.td.params {
			names[i] = p.Name
		}
		b.WriteString("\nparameters: " + strings.Join(names, ", "))
	}
	return b.String()
}

// Hit renders the entry as a search hit with the given score (brief omits
// its tags), as [Catalog.Search] renders its own hits: for rankings made
// outside the catalogue, such as one fused with embeddings.
func (e *Entry) Hit(score float64, brief bool) Hit { return makeHit(e, score, brief) }

// HasTag reports whether the entry carries tag, itself or through its
// backend (case-insensitively), as [SearchOptions.Tag] filters.
func (e *Entry) HasTag(tag string) bool {
	tag = strings.TrimSpace(tag)
	for _, t := range e.Tags {
		if strings.EqualFold(t, tag) {
			return true
		}
	}
	return false
}
