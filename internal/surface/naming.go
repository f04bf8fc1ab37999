package surface

import (
	"cmp"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/catalog"
	"github.com/isogate/isogate/internal/runcode"
)

// MaxBareName is the longest name a tool or prompt keeps under
// server.tool_names bare or auto: MCP 2025-11-25 allows tool names of 1 to
// 128 characters from [A-Za-z0-9_.-].
const MaxBareName = 128

// The kinds of names a [NameCollision] is about.
const (
	KindTool   = "tool"
	KindPrompt = "prompt"
)

// isogateName stands for isogate itself among the backends of a
// [NameCollision] over the name of one of its own tools.
const isogateName = "isogate"

// ownToolNames are the tools isogate lists itself (on some server): a
// backend tool never takes their names bare.
var ownToolNames = map[string]bool{
	"search_tools": true, "tool_info": true, "list_tools_meta": true,
	"call_tool_chain": true, "read_result": true, runcode.ToolName: true,
}

// NameCollision is a tool or prompt name that several backends offer (or
// a backend tool named like one of isogate's own), and how server.tool_names
// settled it.
type NameCollision struct {
	Kind string `json:"kind"` // KindTool or KindPrompt
	Name string `json:"name"` // the backends' own name
	// Backends offer the name, highest priority first, then in
	// configuration order; "isogate" first when the name is one of its own.
	Backends []string `json:"backends"`
	// Winner is listed under the name itself (bare mode; "isogate" for
	// its own); "" when every backend is listed prefixed (auto mode).
	Winner string `json:"winner,omitempty"`
	// Listed is each backend's client-visible name for it.
	Listed map[string]string `json:"listed"`
}

// involves reports whether backend offers the colliding name.
func (c NameCollision) involves(backend string) bool { return slices.Contains(c.Backends, backend) }

// naming maps backend tool and prompt names to client-visible ones, as
// server.tool_names, backends.<name>.priority and the configuration order
// say.
type naming struct {
	mode     config.ToolNames
	priority func(backend string) int // nil: every backend 0
	order    func(backend string) int // position in configuration order; nil: by name
}

// rank orders backends: highest priority first, then configuration order
// (the order the configuration file writes them in; config.Config.Order),
// then by name.
func (n naming) rank(backends []string) []string {
	prio, order := map[string]int{}, map[string]int{}
	for _, b := range backends {
		if n.priority != nil {
			prio[b] = n.priority(b)
		}
		if n.order != nil {
			order[b] = n.order(b)
		}
	}
	out := slices.Clone(backends)
	slices.SortStableFunc(out, func(a, b string) int {
		return cmp.Or(cmp.Compare(prio[b], prio[a]), cmp.Compare(order[a], order[b]), strings.Compare(a, b))
	})
	return out
}

// ToolNames names every catalogue entry for clients in the given mode (with
// priority giving backends.<name>.priority, nil: 0 for all, and order a
// backend's position in configuration order, nil: by name), and reports
// the names several backends share. It is deterministic and every name it
// gives is unique; see naming.assign.
func ToolNames(entries []*catalog.Entry, mode config.ToolNames, priority, order func(string) int) (map[*catalog.Entry]string, []NameCollision) {
	pairs := make([]namePair, len(entries))
	for i, e := range entries {
		pairs[i] = namePair{e.Backend, e.Tool}
	}
	names, collisions := naming{mode, priority, order}.assign(KindTool, pairs)
	out := make(map[*catalog.Entry]string, len(entries))
	for i, e := range entries {
		out[e] = names[pairs[i]]
	}
	return out, collisions
}

// assign gives each pair its client-visible name:
//
//   - prefixed: "<backend>__<name>" for all (uniqueNames: sanitized to
//     [A-Za-z0-9_-], at most 64 characters, hashed apart on a clash);
//   - bare: the name itself; of the backends sharing one, the first by rank
//     keeps it and the others are prefixed;
//   - auto: the name itself when one backend offers it, every backend's
//     prefixed when several do.
//
// In bare and auto a name that is not a valid MCP tool name
// ([A-Za-z0-9_.-]{1,128}) is prefixed, and so is a tool named like one of
// isogate's own. A prefixed name spelled like a bare one gives way to it (it
// is hashed). Each shared name is reported as a collision, sorted by name.
func (n naming) assign(kind string, pairs []namePair) (map[namePair]string, []NameCollision) {
	if n.mode == config.ToolNamesPrefixed {
		return uniqueNames(pairs), nil
	}
	groups := map[string][]string{} // name → backends offering it
	order := map[string]int{}       // backend → rank
	for _, p := range pairs {
		if !slices.Contains(groups[p.name], p.backend) {
			groups[p.name] = append(groups[p.name], p.backend)
		}
		order[p.backend] = 0
	}
	for i, b := range n.rank(slices.Collect(maps.Keys(order))) {
		order[b] = i
	}
	out := make(map[namePair]string, len(pairs))
	taken := map[string]bool{}
	var prefixed []namePair
	var collisions []NameCollision
	for _, name := range slices.Sorted(maps.Keys(groups)) {
		bs := groups[name]
		slices.SortFunc(bs, func(a, b string) int { return cmp.Compare(order[a], order[b]) })
		own := kind == KindTool && ownToolNames[name]
		if !validBareName(name) {
			for _, b := range bs {
				prefixed = append(prefixed, namePair{b, name})
			}
			continue
		}
		c := NameCollision{Kind: kind, Name: name, Backends: bs}
		keep := ""
		switch {
		case own:
			c.Backends, c.Winner = append([]string{isogateName}, bs...), isogateName
		case len(bs) == 1 || n.mode == config.ToolNamesBare:
			keep = bs[0]
			c.Winner = keep
		}
		for _, b := range bs {
			if b == keep {
				out[namePair{b, name}] = name
				taken[name] = true
			} else {
				prefixed = append(prefixed, namePair{b, name})
			}
		}
		if own || len(bs) > 1 {
			collisions = append(collisions, c)
		}
	}
	if len(prefixed) > 0 {
		names := uniqueNames(prefixed)
		slices.SortFunc(prefixed, func(a, b namePair) int {
			return cmp.Or(strings.Compare(a.backend, b.backend), strings.Compare(a.name, b.name))
		})
		for _, p := range prefixed {
			name := names[p]
			for i := 0; taken[name]; i++ {
				name = hashedName(names[p], p.backend, p.name+"\x00"+strconv.Itoa(i))
			}
			taken[name] = true
			out[p] = name
		}
	}
	for i := range collisions {
		c := &collisions[i]
		c.Listed = map[string]string{}
		for _, b := range c.Backends {
			if name, ok := out[namePair{b, c.Name}]; ok {
				c.Listed[b] = name
			}
		}
	}
	return out, collisions
}

// validBareName reports whether name is a valid MCP tool name as
// 2025-11-25 defines it: 1 to 128 characters from [A-Za-z0-9_.-].
func validBareName(name string) bool {
	if name == "" || len(name) > MaxBareName {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c != '_' && c != '-' && c != '.' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// nameCollisions keeps the current collisions of tool and prompt names,
// for /readyz and isogate://backends, and logs each one once (folded: one
// line for the names the same backends share, settled the same way). It
// also keeps which backend each plain name reaches, to report a name that
// moves to another backend (see repoint.go).
type nameCollisions struct {
	logger  *slog.Logger
	mu      sync.Mutex
	current map[string][]NameCollision // kind → collisions
	logged  map[string]bool
	plain   map[string]map[string]string // kind → plain name → backend
	moves   repoints
}

// set replaces the collisions of one kind, logging those not seen before.
func (nc *nameCollisions) set(kind string, cs []NameCollision) {
	nc.mu.Lock()
	defer nc.mu.Unlock()
	if nc.current == nil {
		nc.current, nc.logged = map[string][]NameCollision{}, map[string]bool{}
	}
	nc.current[kind] = cs
	var fresh []NameCollision
	for _, c := range cs {
		key := strings.Join(append([]string{c.Kind, c.Name, c.Winner}, c.Backends...), "\x00")
		if nc.logged[key] {
			continue
		}
		nc.logged[key] = true
		fresh = append(fresh, c)
	}
	for _, g := range FoldCollisions(fresh) {
		nc.logger.Warn(g.Message(), slog.String("kind", g.Kind), slog.Any("names", g.Names), slog.Any("backends", g.Backends))
	}
}

// message tells what a collision is and how it was settled.
func (c NameCollision) message() string {
	var offer, others []string
	for _, b := range c.Backends {
		if b == isogateName && c.Winner == isogateName {
			continue
		}
		offer = append(offer, strconv.Quote(b))
		if b != c.Winner && c.Listed[b] != "" {
			others = append(others, fmt.Sprintf("%q as %q", b, c.Listed[b]))
		}
	}
	who := whoOffers(offer)
	listed := strings.Join(others, ", ")
	switch c.Winner {
	case isogateName:
		return fmt.Sprintf("%s %s %q, the name of an isogate tool; listed %s", who, c.Kind, c.Name, listed)
	case "":
		return fmt.Sprintf("%s %s %q; each is listed prefixed: %s", who, c.Kind, c.Name, listed)
	}
	return fmt.Sprintf("%s %s %q; %q keeps the name, the others are listed prefixed: %s", who, c.Kind, c.Name, c.Winner, listed)
}

// list returns every current collision, tools first, each kind by name.
func (nc *nameCollisions) list() []NameCollision {
	nc.mu.Lock()
	defer nc.mu.Unlock()
	out := []NameCollision{}
	for _, kind := range []string{KindTool, KindPrompt} {
		out = append(out, nc.current[kind]...)
	}
	return out
}

// of returns the current collisions a backend is part of.
func (nc *nameCollisions) of(backend string) []NameCollision {
	var out []NameCollision
	for _, c := range nc.list() {
		if c.involves(backend) {
			out = append(out, c)
		}
	}
	return out
}

// whoOffers says which backends offer a name: "backend "a" offers",
// "backends "a" and "b" both offer", "backends "a", "b" and "c" all offer".
func whoOffers(offer []string) string {
	switch len(offer) {
	case 1:
		return "backend " + offer[0] + " offers"
	case 2:
		return "backends " + offer[0] + " and " + offer[1] + " both offer"
	}
	return "backends " + strings.Join(offer[:len(offer)-1], ", ") + " and " + offer[len(offer)-1] + " all offer"
}
