package codemode

import (
	"encoding/json"

	"github.com/isogate/isogate/gateway/catalog"
)

// FromCatalog adapts the gateway's tool catalogue to code mode.
func FromCatalog(c *catalog.Catalog) Catalog { return catalogAdapter{c} }

type catalogAdapter struct{ c *catalog.Catalog }

func (a catalogAdapter) CodeModeTools() []Tool {
	entries := a.c.Entries()
	tools := make([]Tool, 0, len(entries))
	for _, e := range entries {
		t := Tool{Backend: e.Backend, Name: e.Tool, BackendIdent: e.JSBackend, NameIdent: e.JSTool, Declarations: e.TypeScript}
		if e.Def != nil {
			t.Description = e.Def.Description
			if raw, ok := e.Def.InputSchema.(json.RawMessage); ok {
				t.InputSchema = raw
			}
		}
		tools = append(tools, t)
	}
	return tools
}

// Version is the catalogue's version: code mode rebuilds its view of the
// tools only when it changes.
func (a catalogAdapter) Version() uint64 { return a.c.Version() }
