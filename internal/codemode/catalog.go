package codemode

import (
	"encoding/json"

	"github.com/isogate/isogate/internal/catalog"
)

// FromCatalog adapts the gateway's tool catalogue to code mode.
func FromCatalog(c *catalog.Catalog) Catalog { return catalogAdapter{c} }

type catalogAdapter struct{ c *catalog.Catalog }

func (a catalogAdapter) CodeModeTools() []Tool {
	entries := a.c.Entries()
	tools := make([]Tool, 0, len(entries))
	for _, e := range entries {
		tools = append(tools, toolOf(e))
	}
	return tools
}

// Lookup resolves a name by the catalogue's rules: the catalogue is the
// only authority on names. Without suggest, an unknown name costs no search
// for close ones.
func (a catalogAdapter) Lookup(name string, suggest bool) (Tool, error) {
	lookup := a.c.Resolve
	if suggest {
		lookup = a.c.Lookup
	}
	e, err := lookup(name)
	if err != nil {
		return Tool{}, err
	}
	return toolOf(e), nil
}

func toolOf(e *catalog.Entry) Tool {
	t := Tool{Backend: e.Backend, Name: e.Tool, BackendIdent: e.JSBackend, NameIdent: e.JSTool, Declarations: e.TypeScript,
		TypeDeclarations: typeDeclarationsOf(e)}
	if e.Def != nil {
		t.Description = e.Def.Description
		t.Idempotent = e.Def.Annotations != nil && e.Def.Annotations.IdempotentHint
		if raw, ok := e.Def.InputSchema.(json.RawMessage); ok {
			t.InputSchema = raw
		}
	}
	return t
}

// DeniedTools lists the tools policy keeps out of the catalogue.
func (a catalogAdapter) DeniedTools() []catalog.DeniedTool { return a.c.Denied() }

// Version is the catalogue's version: code mode rebuilds its view of the
// tools only when it changes.
func (a catalogAdapter) Version() uint64 { return a.c.Version() }
