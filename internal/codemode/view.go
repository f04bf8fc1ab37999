package codemode

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/isogate/isogate/internal/catalog"
)

// view is everything a run needs to know about the catalogue, built once
// per catalogue version and shared by all runs: the tools, the host-side
// name lookup of the bridge and the bridge prelude.
type view struct {
	version   uint64
	versioned bool
	names     []string // configured backends the view was built for
	tools     []Tool
	backends  []*backendView          // configured backends and backends with tools, in order
	byName    map[string]*backendView // original and sanitized backend name → backend
	prelude   string

	durableOnce    sync.Once
	durablePrelude string // the prelude of durable runs, built on first use

	once      sync.Once
	ifaces    []byte     // __interfaces JSON, built on first use
	nameIdx   *nameIndex // for hints, built on first use
	nameIdxMu sync.Mutex
}

// backendView is one backend as the bridge sees it.
type backendView struct {
	Name  string `json:"name"`
	Ident string `json:"ident"`
	// Tools is the bridge's name table of the backend, [property, tool,
	// identifier] for each property that names a tool (as tool resolves
	// it), when the catalogue is small enough to carry it in the prelude
	// (maxPreludeTools); nil: the bridge asks the host.
	Tools [][3]string `json:"tools,omitempty"`
	tools []*Tool
	byKey map[string]*Tool // original and sanitized tool name → tool
	// byNameKey finds a tool by the catalog.NameKey of a name byKey does
	// not know (the other spelling of hyphens and underscores).
	byNameKey map[string]*Tool
	// denied are the tools policy denies, by their original and sanitized
	// names and the NameKey of those (resolve).
	denied map[string]*catalog.DeniedTool
	keys   []byte // JSON array of the property names, built on first use
	once   sync.Once
}

// tool finds a tool by its original or sanitized name.
func (b *backendView) tool(name string) *Tool {
	if b == nil {
		return nil
	}
	return b.byKey[name]
}

// resolve is what a property of the backend names, as the catalogue
// answers (catalog.Catalog.What) on the run's view: a tool, or a tool
// policy denies, or nothing. Exact spellings are tried first, then the
// hyphen and underscore spellings as one (catalog.NameKey).
func (b *backendView) resolve(prop string) (*Tool, *catalog.DeniedTool) {
	if b == nil {
		return nil, nil
	}
	if t := b.byKey[prop]; t != nil {
		return t, nil
	}
	if d := b.denied[prop]; d != nil {
		return nil, d
	}
	key := catalog.NameKey(prop)
	if t := b.byNameKey[key]; t != nil {
		return t, nil
	}
	return nil, b.denied[key]
}

// keysJSON is the JSON array of the backend object's property names:
// sanitized names first, then the original names that differ.
func (b *backendView) keysJSON() []byte {
	b.once.Do(func() {
		keys := make([]string, 0, len(b.tools)*2)
		seen := make(map[string]bool, len(b.tools)*2)
		for _, pass := range []func(*Tool) string{func(t *Tool) string { return t.NameIdent }, func(t *Tool) string { return t.Name }} {
			for _, t := range b.tools {
				if k := pass(t); !seen[k] {
					seen[k] = true
					keys = append(keys, k)
				}
			}
		}
		b.keys = mustMarshal(keys)
	})
	return b.keys
}

// buildView indexes a catalogue snapshot. names are the configured
// backends; each exists in the view even when none of its tools is known.
func buildView(tools []Tool, denied []catalog.DeniedTool, names []string, version uint64, versioned bool) *view {
	v := &view{version: version, versioned: versioned, names: names, tools: tools, byName: map[string]*backendView{}}
	add := func(name, ident string) *backendView {
		if b := v.byName[name]; b != nil {
			return b
		}
		b := &backendView{Name: name, Ident: ident, byKey: map[string]*Tool{}, byNameKey: map[string]*Tool{}}
		v.backends = append(v.backends, b)
		v.byName[name] = b
		return b
	}
	for i := range tools {
		t := &tools[i]
		b := add(t.Backend, t.BackendIdent)
		b.tools = append(b.tools, t)
		for _, k := range []string{t.NameIdent, t.Name} {
			if _, taken := b.byKey[k]; !taken {
				b.byKey[k] = t
			}
			if _, taken := b.byNameKey[catalog.NameKey(k)]; !taken {
				b.byNameKey[catalog.NameKey(k)] = t
			}
		}
	}
	for i := range denied {
		d := &denied[i]
		b := v.byName[d.Backend]
		if b == nil {
			continue // a backend with no tool offered: reached by name only when configured (below)
		}
		b.addDenied(d)
	}
	idents := map[string]bool{}
	for _, b := range v.backends {
		idents[b.Ident] = true
	}
	for _, name := range names {
		if v.byName[name] != nil {
			continue
		}
		ident := catalog.JSIdent(name)
		if idents[ident] {
			ident = "" // taken by another backend: reachable by its original name only
		}
		idents[ident] = true
		b := add(name, ident)
		for i := range denied {
			if denied[i].Backend == name {
				b.addDenied(&denied[i])
			}
		}
	}
	for _, b := range v.backends {
		if b.Ident != "" && v.byName[b.Ident] == nil {
			v.byName[b.Ident] = b
		}
	}
	if len(tools) <= maxPreludeTools {
		for _, b := range v.backends {
			b.Tools = b.nameTable()
		}
	}
	v.prelude = prelude(v.backends, false)
	return v
}

// addDenied indexes a tool policy denies under its original and
// sanitized names and their NameKeys, where no offered tool has them.
func (b *backendView) addDenied(d *catalog.DeniedTool) {
	if b.denied == nil {
		b.denied = map[string]*catalog.DeniedTool{}
	}
	for _, k := range []string{d.Tool, catalog.JSIdent(d.Tool)} {
		for _, k := range []string{k, catalog.NameKey(k)} {
			if _, taken := b.denied[k]; !taken && b.byKey[k] == nil {
				b.denied[k] = d
			}
		}
	}
}

// maxPreludeTools is the largest catalogue whose tool names the bridge
// prelude carries, so that a program resolves a tool without a host call
// (in process isolation a round trip to the parent, each run): the table is
// built with every context prepared, off the run's path, but that work
// grows with the catalogue; larger ones are looked up on the host.
const maxPreludeTools = 256

// nameTable is b's Tools: every property tool resolves, in the order of
// the tools (sanitized name first), then the names of denied tools (whose calls the host
// refuses with TOOL_DENIED), or nil when b has no tools yet (the host then
// waits for a backend that is still starting). The bridge finds a property
// by its exact spelling first, then by its catalog.NameKey.
func (b *backendView) nameTable() [][3]string {
	if len(b.tools) == 0 {
		return nil
	}
	table := make([][3]string, 0, 2*len(b.tools))
	seen := make(map[string]bool, 2*len(b.tools))
	row := func(k, tool string) {
		if !seen[k] {
			seen[k] = true
			table = append(table, [3]string{k, tool, catalog.JSIdent(tool)})
		}
	}
	for _, t := range b.tools {
		for _, k := range []string{t.NameIdent, t.Name} {
			if b.byKey[k] == t && !seen[k] {
				seen[k] = true
				table = append(table, [3]string{k, t.Name, t.NameIdent})
			}
		}
	}
	denied := make([]string, 0, len(b.denied))
	for k := range b.denied {
		denied = append(denied, k)
	}
	slices.Sort(denied)
	for _, k := range denied {
		row(k, b.denied[k].Tool)
	}
	return table
}

// preludeFor returns the bridge prelude of a run: durable runs' replaces
// Date and Math.random with journalled ones.
func (v *view) preludeFor(durable bool) string {
	if !durable {
		return v.prelude
	}
	v.durableOnce.Do(func() { v.durablePrelude = prelude(v.backends, true) })
	return v.durablePrelude
}

// backend finds a backend by its original or sanitized name.
func (v *view) backend(name string) *backendView { return v.byName[name] }

// callName is how a program calls the tool full ("backend.tool", the
// original names): through the JavaScript identifiers the bridge offers,
// e.g. everything.get_sum for everything.get-sum, or full itself when the
// view does not know it.
func (v *view) callName(full string) string {
	for _, b := range v.backends {
		name, ok := strings.CutPrefix(full, b.Name+".")
		if t := b.tool(name); ok && t != nil {
			if b.Ident == "" { // reachable by its original name only
				return fmt.Sprintf("globalThis[%q].%s", b.Name, t.NameIdent)
			}
			return b.Ident + "." + t.NameIdent
		}
	}
	return full
}

// interfacesJSON is __interfaces: backend → tool → interface.
func (v *view) interfacesJSON() []byte {
	v.once.Do(func() { v.ifaces = mustCanonical(mustMarshal(interfaces(v.tools))) })
	return v.ifaces
}

// index returns the name index hints use.
func (v *view) index() *nameIndex {
	v.nameIdxMu.Lock()
	defer v.nameIdxMu.Unlock()
	if v.nameIdx == nil {
		v.nameIdx = newNameIndex(v.tools, v.backends)
	}
	return v.nameIdx
}

// viewCache keeps the view of the current catalogue version.
type viewCache struct {
	cur atomic.Pointer[view]
}

// versioner is implemented by catalogues that can say whether they changed.
type versioner interface{ Version() uint64 }

// deniedLister is implemented by catalogues that know the tools policy
// denies (catalog.Catalog.Denied): the bridge, the plan and the fast tiers
// then name a denied tool as such, not as unknown.
type deniedLister interface {
	DeniedTools() []catalog.DeniedTool
}

// get returns the view of the catalogue as it is now.
func (c *viewCache) get(cat Catalog, backends Backends) *view {
	var names []string
	if backends != nil {
		names = backends.Names()
	}
	vc, versioned := cat.(versioner)
	var version uint64
	if versioned {
		version = vc.Version()
		if v := c.cur.Load(); v != nil && v.versioned && v.version == version && slices.Equal(v.names, names) {
			return v
		}
	}
	var denied []catalog.DeniedTool
	if dc, ok := cat.(deniedLister); ok {
		denied = dc.DeniedTools()
	}
	v := buildView(cat.CodeModeTools(), denied, names, version, versioned)
	c.cur.Store(v)
	return v
}

// backendList renders backend names for messages.
func backendList(bs []*backendView) string {
	names := make([]string, 0, len(bs))
	for _, b := range bs {
		if b.Ident != "" {
			names = append(names, b.Ident)
		} else {
			names = append(names, b.Name)
		}
	}
	return strings.Join(names, ", ")
}
