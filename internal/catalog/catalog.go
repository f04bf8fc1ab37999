package catalog

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Catalog holds the tools of all backends. The zero value is not usable;
// create one with [New]. All methods are safe for concurrent use.
type Catalog struct {
	mu       sync.Mutex // serialises writers
	backends map[string]*backend
	version  uint64
	snap     atomic.Pointer[snapshot]
}

// Entry is one catalogued tool. Entries are shared and immutable: callers
// must not modify an Entry or anything it points to.
type Entry struct {
	// Name is the canonical "backend.tool" name with the original names.
	Name string `json:"name"`
	// Backend is the backend's name as configured.
	Backend string `json:"backend"`
	// Tool is the tool's name as reported by the backend.
	Tool string `json:"tool"`
	// JSBackend is the backend's sanitized identifier, unique among backends.
	JSBackend string `json:"jsBackend"`
	// JSTool is the tool's sanitized identifier, unique within its backend.
	JSTool string `json:"jsTool"`
	// JSName is "JSBackend.JSTool", the expression code mode calls.
	JSName string `json:"jsName"`
	// Summary is the first sentence of the description (at most 200 runes).
	Summary string `json:"summary,omitempty"`
	// BackendDescription is the backend's description
	// (backends.<name>.description), one line; "" when it has none.
	BackendDescription string `json:"backendDescription,omitempty"`
	// Tags are the backend's tags plus the tool's own (from _meta.tags),
	// sorted and de-duplicated case-insensitively.
	Tags []string `json:"tags,omitempty"`
	// Def is a shallow copy of the backend's tool definition whose
	// InputSchema and OutputSchema have been normalised to json.RawMessage.
	Def *mcp.Tool `json:"-"`

	td *toolData
}

// backend is one backend's processed tools, built outside the lock.
type backend struct {
	name        string
	description string // one line, see BackendSpec
	tags        []string
	tools       []*toolData  // sorted by name
	denied      []DeniedTool // sorted by Tool
}

// toolData is everything derived from one tool definition that does not
// depend on other backends. It is immutable once built.
type toolData struct {
	def        *mcp.Tool
	name       string
	jsName     string
	tags       []string
	summary    string
	in, out    *schema
	inRaw      json.RawMessage
	outRaw     json.RawMessage
	params     []Param
	args       string // TS type of the argument object
	argsOpt    bool   // the argument object may be omitted
	result     string // TS type of the structured result
	example    string // argument literal for the example call
	fieldToks  [numFields][]token
	lowerNames [2]string // lower-cased Tool and JSTool, for suggestions

	declOnce sync.Once // builds decls on first use
	decls    *Decls    // TypeScript declarations named after jsName

	argsOnce sync.Once  // resolves argCheck on first use
	argCheck argChecker // the input schema resolved for validation
}

// snapshot is an immutable view of the catalogue published to readers.
type snapshot struct {
	version  uint64
	backends []string // sorted
	tags     []string // sorted, distinct (case-insensitively)
	entries  []*Entry // sorted by Name
	names    []string // entries' Names, for List
	byName   map[string][]*Entry
	byJSName map[string][]*Entry
	byTool   map[string][]*Entry
	byJSTool map[string][]*Entry
	// byKey finds entries by [NameKey] of their qualified and bare names
	// (the hyphen and underscore spellings of one name).
	byKey map[string][]*Entry
	// denied are the tools policy keeps out of the entries, by the same
	// names as the entries (deniedBy*), for "what is this name?".
	denied       []DeniedTool
	deniedByName map[string][]*DeniedTool
	deniedByKey  map[string][]*DeniedTool

	// The search index is built on first use, so that a burst of
	// SetBackend calls (e.g. at start-up) does not index every
	// intermediate snapshot.
	idxOnce sync.Once
	idx     *index
}

// index returns the snapshot's search index, building it on first use.
func (s *snapshot) index() *index {
	s.idxOnce.Do(func() { s.idx = buildIndex(s.entries) })
	return s.idx
}

// New returns an empty catalogue.
func New() *Catalog {
	c := &Catalog{backends: map[string]*backend{}}
	c.snap.Store(buildSnapshot(nil, 0))
	return c
}

// SetBackend replaces all tools of the named backend (adding the backend if
// it is new). tags label the backend for [SearchOptions.Tag]. Nil tools and
// tools without a name are skipped; if a backend reports the same name
// twice, the first definition wins. The catalogue copies what it keeps, but
// the tools' Meta maps and Annotations are shared: do not modify them later.
// An empty backend name is ignored. Backend names should not contain '.',
// which would make "backend.tool" names ambiguous.
func (c *Catalog) SetBackend(name string, tags []string, tools []*mcp.Tool) {
	c.SetBackendSpec(name, BackendSpec{Tags: tags}, tools)
}

// SetBackendPolicy is [Catalog.SetBackend] for a backend some of whose
// tools policy denies: tools are those it offers, denied those it keeps
// out, each with the rule that does. Denied tools are in no list, search
// or entry; [Catalog.Lookup] names them as denied (a *DeniedError).
func (c *Catalog) SetBackendPolicy(name string, tags []string, tools []*mcp.Tool, denied []DeniedTool) {
	c.SetBackendSpec(name, BackendSpec{Tags: tags, Denied: denied}, tools)
}

// maxBackendDescription bounds the description a catalogue keeps of a
// backend, in runes (a line, as a tool's summary).
const maxBackendDescription = 200

// SetDescribedBackend is [Catalog.SetBackend] with the backend's
// description (backends.<name>.description): search hits from the
// backend show it, and its words are searched (weighted half a backend
// name's), so that twin servers are told apart.
func (c *Catalog) SetDescribedBackend(name, description string, tags []string, tools []*mcp.Tool) {
	c.SetBackendSpec(name, BackendSpec{Description: description, Tags: tags}, tools)
}

// BackendSpec is what the catalogue keeps of a backend beside its tools.
type BackendSpec struct {
	// Description is backends.<name>.description ([Catalog.SetDescribedBackend]).
	Description string
	// Tags are the backend's configured tags.
	Tags []string
	// Denied are the tools policy keeps out, each with its rule
	// ([Catalog.SetBackendPolicy]).
	Denied []DeniedTool
}

// SetBackendSpec replaces a backend's tools with tools, and what the
// catalogue keeps of it with spec: [Catalog.SetBackend],
// [Catalog.SetBackendPolicy] and [Catalog.SetDescribedBackend] in one.
func (c *Catalog) SetBackendSpec(name string, spec BackendSpec, tools []*mcp.Tool) {
	tags, denied, description := spec.Tags, spec.Denied, spec.Description
	if name == "" {
		return
	}
	b := buildBackend(name, tags, tools)
	for _, d := range denied {
		if d.Tool != "" {
			d.Backend = name
			b.denied = append(b.denied, d)
		}
	}
	slices.SortFunc(b.denied, func(x, y DeniedTool) int { return strings.Compare(x.Tool, y.Tool) })
	b.description = clipRunes(oneLine(description), maxBackendDescription)
	descToks := tokenize(b.description, nil)
	for _, td := range b.tools {
		td.fieldToks[fieldBackendDesc] = descToks
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.backends[name] = b
	c.publishLocked()
}

// RemoveBackend removes a backend and its tools. Removing an unknown
// backend is a no-op.
func (c *Catalog) RemoveBackend(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.backends[name]; !ok {
		return
	}
	delete(c.backends, name)
	c.publishLocked()
}

// Backends returns the names of all backends, sorted.
func (c *Catalog) Backends() []string { return slices.Clone(c.snap.Load().backends) }

// Tags returns every tag used by a backend or tool, sorted.
func (c *Catalog) Tags() []string { return slices.Clone(c.snap.Load().tags) }

// Count returns the number of tools in the catalogue.
func (c *Catalog) Count() int { return len(c.snap.Load().entries) }

// Entries returns all tools sorted by Name. The slice is the caller's; the
// entries are shared and must not be modified.
func (c *Catalog) Entries() []*Entry { return slices.Clone(c.snap.Load().entries) }

// Version returns a counter that changes whenever the catalogue changes,
// for callers that cache derived data (e.g. code-mode bindings).
func (c *Catalog) Version() uint64 { return c.snap.Load().version }

func (c *Catalog) publishLocked() {
	c.version++
	bs := make([]*backend, 0, len(c.backends))
	for _, b := range c.backends {
		bs = append(bs, b)
	}
	c.snap.Store(buildSnapshot(bs, c.version))
}

// buildBackend processes one backend's tool list.
func buildBackend(name string, tags []string, tools []*mcp.Tool) *backend {
	b := &backend{name: name, tags: normTags(tags)}
	seen := map[string]bool{}
	for _, t := range tools {
		if t == nil || t.Name == "" || seen[t.Name] {
			continue
		}
		seen[t.Name] = true
		b.tools = append(b.tools, buildTool(t))
	}
	slices.SortFunc(b.tools, func(x, y *toolData) int { return strings.Compare(x.name, y.name) })
	names := make([]string, len(b.tools))
	for i, td := range b.tools {
		names[i] = td.name
	}
	ids := assignIdents(names)
	nameToks := tokenize(name, nil)
	tagToks := tokenize(strings.Join(b.tags, " "), nil)
	for _, td := range b.tools {
		td.jsName = ids[td.name]
		td.lowerNames = [2]string{strings.ToLower(td.name), strings.ToLower(td.jsName)}
		td.fieldToks[fieldBackend] = nameToks
		td.fieldToks[fieldTags] = append(td.fieldToks[fieldTags], tagToks...)
	}
	return b
}

// buildTool derives everything backend-independent from one definition.
func buildTool(t *mcp.Tool) *toolData {
	def := *t
	td := &toolData{def: &def, name: t.Name}
	td.inRaw = schemaJSON(t.InputSchema)
	td.outRaw = schemaJSON(t.OutputSchema)
	if td.inRaw != nil {
		def.InputSchema = td.inRaw
	}
	if td.outRaw != nil {
		def.OutputSchema = td.outRaw
	}
	td.in = parseSchema(td.inRaw)
	td.out = parseSchema(td.outRaw)
	td.tags = normTags(metaTags(t.Meta))
	td.summary = summarize(t.Description)
	if td.summary == "" {
		td.summary = summarize(displayTitle(t))
	}
	td.params = params(td.in)
	td.args, td.argsOpt = argsType(td.in)
	td.result = resultType(td.out)
	td.example = exampleArgs(td.in)

	td.fieldToks[fieldName] = tokenize(t.Name, nil)
	td.fieldToks[fieldDesc] = tokenize(displayTitle(t)+" "+t.Description, nil)
	var pn, pd, pv []token
	for _, p := range td.params {
		pn = tokenize(p.Name, pn)
		pd = tokenize(p.Description, pd)
		for _, v := range p.Enum {
			if s, ok := v.(string); ok {
				pv = tokenize(s, pv)
			}
		}
	}
	td.fieldToks[fieldParamName] = pn
	td.fieldToks[fieldParamDesc] = pd
	td.fieldToks[fieldParamValues] = pv
	td.fieldToks[fieldTags] = tokenize(strings.Join(td.tags, " "), nil)
	return td
}

// schemaJSON marshals a schema given as any Go value (map, json.RawMessage,
// *jsonschema.Schema, …). It returns nil for absent or unmarshalable schemas.
func schemaJSON(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil || string(b) == "null" {
		return nil
	}
	return json.RawMessage(compactJSON(b))
}

// displayTitle returns the tool's title, falling back to the annotations'.
func displayTitle(t *mcp.Tool) string {
	if t.Title != "" {
		return t.Title
	}
	if t.Annotations != nil {
		return t.Annotations.Title
	}
	return ""
}

// metaTags reads tool-level tags from _meta.tags or, as FastMCP writes
// them, _meta._fastmcp.tags.
func metaTags(m mcp.Meta) []string {
	if m == nil {
		return nil
	}
	v, ok := m["tags"]
	if !ok {
		if fm, ok2 := m["_fastmcp"].(map[string]any); ok2 {
			v = fm["tags"]
		}
	}
	switch v := v.(type) {
	case []string:
		return v
	case []any:
		var out []string
		for _, e := range v {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// normTags trims, drops empty and de-duplicates (case-insensitively) tags,
// returning them sorted.
func normTags(tags []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range tags {
		t = strings.TrimSpace(t)
		if t == "" || seen[strings.ToLower(t)] {
			continue
		}
		seen[strings.ToLower(t)] = true
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// buildSnapshot combines backends into a published view.
func buildSnapshot(bs []*backend, version uint64) *snapshot {
	slices.SortFunc(bs, func(x, y *backend) int { return strings.Compare(x.name, y.name) })
	s := &snapshot{
		version:  version,
		byName:   map[string][]*Entry{},
		byJSName: map[string][]*Entry{},
		byTool:   map[string][]*Entry{},
		byJSTool: map[string][]*Entry{},
		byKey:    map[string][]*Entry{},

		deniedByName: map[string][]*DeniedTool{},
		deniedByKey:  map[string][]*DeniedTool{},
	}
	names := make([]string, len(bs))
	for i, b := range bs {
		names[i] = b.name
	}
	s.backends = names
	jsb := assignIdents(names)
	var allTags []string
	for _, b := range bs {
		allTags = append(allTags, b.tags...)
		s.denied = append(s.denied, b.denied...)
		for _, td := range b.tools {
			e := &Entry{
				Name:               b.name + "." + td.name,
				Backend:            b.name,
				Tool:               td.name,
				JSBackend:          jsb[b.name],
				JSTool:             td.jsName,
				Summary:            td.summary,
				BackendDescription: b.description,
				Tags:               normTags(append(slices.Clone(b.tags), td.tags...)),
				Def:                td.def,
				td:                 td,
			}
			e.JSName = e.JSBackend + "." + e.JSTool
			allTags = append(allTags, td.tags...)
			s.entries = append(s.entries, e)
		}
	}
	slices.SortStableFunc(s.entries, func(x, y *Entry) int { return strings.Compare(x.Name, y.Name) })
	s.names = make([]string, len(s.entries))
	for i, e := range s.entries {
		s.names[i] = e.Name
		s.byName[e.Name] = append(s.byName[e.Name], e)
		s.byJSName[e.JSName] = append(s.byJSName[e.JSName], e)
		s.byTool[e.Tool] = append(s.byTool[e.Tool], e)
		s.byJSTool[e.JSTool] = append(s.byJSTool[e.JSTool], e)
		for _, k := range keysOf(e.Backend, e.Tool, e.JSBackend) {
			if !slices.Contains(s.byKey[k], e) {
				s.byKey[k] = append(s.byKey[k], e)
			}
		}
	}
	for i := range s.denied {
		d := &s.denied[i]
		jb := jsb[d.Backend]
		for _, n := range []string{d.Backend + "." + d.Tool, jb + "." + JSIdent(d.Tool), d.Tool, JSIdent(d.Tool)} {
			if !slices.Contains(s.deniedByName[n], d) {
				s.deniedByName[n] = append(s.deniedByName[n], d)
			}
		}
		for _, k := range keysOf(d.Backend, d.Tool, jb) {
			if !slices.Contains(s.deniedByKey[k], d) {
				s.deniedByKey[k] = append(s.deniedByKey[k], d)
			}
		}
	}
	s.tags = normTags(allTags)
	return s
}

// clipRunes cuts s to at most n runes, ending a cut one with "…".
func clipRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
