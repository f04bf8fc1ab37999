package gateway

import (
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/pipeline"
)

// publish puts a backend's tools in the catalogue, as the tool policy
// offers them (denied tools never enter the catalogue: search, tool_info,
// list_tools_meta, __interfaces and the bridge all read it). Tools of a
// backend no longer configured are ignored.
func (g *Gateway) publish(name string, tools []*mcp.Tool) {
	if !slices.Contains(g.manager.Backends(), name) {
		return
	}
	g.catalog.SetBackend(name, g.tagsOf(name), g.policy.Filter(name, tools))
	g.passthrough.sync()
}

// Reload applies the backends and tool policy of a new configuration (which
// Load has validated): backends added, removed or changed are started,
// stopped or restarted; the others, open client sessions and runs in flight
// keep working. Other settings (server, sandbox) take effect at the next
// start. It returns what changed.
func (g *Gateway) Reload(cfg *config.Config) (backend.UpdateResult, error) {
	g.reloadMu.Lock()
	defer g.reloadMu.Unlock()
	specs := append(backendSpecs(cfg), g.opts.ExtraSpecs...)
	g.specs.Store(&specs)
	g.policy.Replace(pipeline.NewPolicy(cfg.Backends))
	res, err := g.manager.Update(specs)
	if err != nil {
		return res, err
	}
	for _, name := range res.Removed {
		g.catalog.RemoveBackend(name)
		g.aggregate.forget(name)
	}
	g.passthrough.sync()
	// Tags and policy may have changed for the backends that kept running.
	tools := g.manager.Tools()
	for _, name := range g.manager.Backends() {
		if ts, ok := tools[name]; ok && !slices.Contains(res.Added, name) && !slices.Contains(res.Changed, name) {
			g.publish(name, ts)
		}
	}
	return res, nil
}
