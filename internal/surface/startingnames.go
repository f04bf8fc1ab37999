package surface

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A plain (unprefixed) passthrough name is settled from the tools the
// backends have listed so far. While a backend is still starting and its
// tools are unknown (its first start, no cached list), a name it will
// offer too can reach a backend ranked below it in the meantime: with
// server.tool_names bare, read_file of the second filesystem server in the
// file until the first one has connected. A call by such a name therefore
// waits (Options.DiscoveryWait at most) for the backends ranked above the
// one it reaches that are still starting, and then goes where the name
// points once they have listed their tools; if the name is no longer
// listed (auto: a shared name is prefixed on every backend), the call is
// answered with the names it now has, and reaches no backend.

// settleStartingName returns the backend tool a call by name should reach,
// given the one it was listed for; or, when the name is gone after the
// wait, a result for the client saying so (and no backend).
func (sf *Surface) settleStartingName(ctx context.Context, name, backendName, tool string) (string, string, *mcp.CallToolResult) {
	if name != tool {
		return backendName, tool, nil // prefixed: it names its backend
	}
	starting := sf.unknownStarting()
	if !slices.ContainsFunc(starting, func(s string) bool { return sf.passthrough.outranks(s, backendName) }) {
		return backendName, tool, nil
	}
	sf.awaitStarting(ctx)
	if owner, ok := sf.passthrough.owner(name); ok {
		return owner.backend, owner.name, nil
	}
	now := sf.passthrough.namesOf(tool)
	return "", "", textResult(fmt.Sprintf("The tool %q is now offered by several backends and named after each: %s. Call the one you mean.",
		name, strings.Join(now, ", ")), true)
}

// outranks reports whether backend a ranks above b for a name both offer.
func (p *passthrough) outranks(a, b string) bool {
	return a != b && p.naming.rank([]string{a, b})[0] == a
}

// owner returns the backend tool a listed name reaches.
func (p *passthrough) owner(name string) (namePair, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	o, ok := p.origins[name]
	return o, ok
}

// namesOf lists the names under which the backends' tools called tool are
// listed, sorted.
func (p *passthrough) namesOf(tool string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for name, o := range p.origins {
		if o.name == tool {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}
