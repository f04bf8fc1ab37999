package surface

import (
	"bytes"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/catalog"
)

// offers is what each backend offers: backend → its own names.
type offers map[string][]string

func (o offers) pairs() []namePair {
	var ps []namePair
	for _, b := range slices.Sorted(maps.Keys(o)) {
		for _, n := range o[b] {
			ps = append(ps, namePair{b, n})
		}
	}
	return ps
}

// assignNames names o's tools (or prompts) and returns "backend.name" →
// client-visible name, and each collision as "name:winner:backends".
// order is the backends in configuration order (nil: by name).
func assignNames(t *testing.T, mode config.ToolNames, prio map[string]int, order []string, kind string, o offers) (map[string]string, []string) {
	t.Helper()
	n := naming{mode: mode, priority: func(b string) int { return prio[b] }}
	if order != nil {
		n.order = func(b string) int { return slices.Index(order, b) }
	}
	ps := o.pairs()
	names, cs := n.assign(kind, ps)
	out := map[string]string{}
	seen := map[string]string{}
	for _, p := range ps {
		name, ok := names[p]
		if !ok {
			t.Fatalf("%s.%s has no name", p.backend, p.name)
		}
		if other, dup := seen[name]; dup {
			t.Errorf("%s.%s and %s are both named %q", p.backend, p.name, other, name)
		}
		seen[name] = p.backend + "." + p.name
		if len(name) > MaxBareName || !validBareName(name) {
			t.Errorf("%s.%s → %q is not a valid MCP tool name", p.backend, p.name, name)
		}
		out[p.backend+"."+p.name] = name
	}
	var collisions []string
	for _, c := range cs {
		if c.Kind != kind {
			t.Errorf("collision %+v: kind %q, want %q", c, c.Kind, kind)
		}
		collisions = append(collisions, c.Name+":"+c.Winner+":"+strings.Join(c.Backends, ","))
	}
	return out, collisions
}

func TestNamingModes(t *testing.T) {
	long := strings.Repeat("x", 130)
	const (
		prefixed = config.ToolNamesPrefixed
		bare     = config.ToolNamesBare
		auto     = config.ToolNamesAuto
	)
	tests := []struct {
		name       string
		mode       config.ToolNames
		prio       map[string]int
		order      []string // configuration order; nil: by name
		kind       string
		offers     offers
		want       map[string]string // a subset: backend.name → name
		collisions []string          // name:winner:backends (rank order)
	}{
		{name: "prefixed, distinct", mode: prefixed, offers: offers{"a": {"x"}, "b": {"y"}},
			want: map[string]string{"a.x": "a__x", "b.y": "b__y"}},
		{name: "bare, distinct", mode: bare, offers: offers{"a": {"x"}, "b": {"y"}},
			want: map[string]string{"a.x": "x", "b.y": "y"}},
		{name: "auto, distinct", mode: auto, offers: offers{"a": {"x"}, "b": {"y"}},
			want: map[string]string{"a.x": "x", "b.y": "y"}},

		{name: "prefixed, shared: no collision to settle", mode: prefixed, offers: offers{"a": {"search"}, "b": {"search"}},
			want: map[string]string{"a.search": "a__search", "b.search": "b__search"}},
		{name: "bare, shared: first in configuration order, not by name", mode: bare, order: []string{"filesystem", "docs2"},
			offers:     offers{"docs2": {"read_file"}, "filesystem": {"read_file"}},
			want:       map[string]string{"filesystem.read_file": "read_file", "docs2.read_file": "docs2__read_file"},
			collisions: []string{"read_file:filesystem:filesystem,docs2"}},
		{name: "bare, shared: without an order, by name", mode: bare, offers: offers{"b": {"search"}, "a": {"search"}},
			want:       map[string]string{"a.search": "search", "b.search": "b__search"},
			collisions: []string{"search:a:a,b"}},
		{name: "bare, shared: names compare byte-wise", mode: bare, offers: offers{"beta": {"s"}, "Beta": {"s"}, "beta-2": {"s"}},
			want:       map[string]string{"Beta.s": "s", "beta.s": "beta__s", "beta-2.s": "beta-2__s"},
			collisions: []string{"s:Beta:Beta,beta,beta-2"}},
		{name: "bare, shared: higher priority wins", mode: bare, prio: map[string]int{"b": 1}, offers: offers{"a": {"search"}, "b": {"search"}},
			want:       map[string]string{"a.search": "a__search", "b.search": "search"},
			collisions: []string{"search:b:b,a"}},
		{name: "bare, shared: negative priority loses", mode: bare, prio: map[string]int{"a": -1}, offers: offers{"a": {"s"}, "b": {"s"}, "c": {"s"}},
			want:       map[string]string{"a.s": "a__s", "b.s": "s", "c.s": "c__s"},
			collisions: []string{"s:b:b,c,a"}},
		{name: "bare, priority tie: configuration order", mode: bare, prio: map[string]int{"m": 5, "z": 5}, order: []string{"a", "z", "m"},
			offers:     offers{"a": {"s"}, "m": {"s"}, "z": {"s"}},
			want:       map[string]string{"a.s": "a__s", "m.s": "m__s", "z.s": "s"},
			collisions: []string{"s:z:z,m,a"}},
		{name: "auto, shared: every one prefixed", mode: auto, offers: offers{"a": {"search", "x"}, "b": {"search", "y"}},
			want:       map[string]string{"a.search": "a__search", "b.search": "b__search", "a.x": "x", "b.y": "y"},
			collisions: []string{"search::a,b"}},
		{name: "auto ignores priority", mode: auto, prio: map[string]int{"b": 9}, offers: offers{"a": {"s"}, "b": {"s"}},
			want:       map[string]string{"a.s": "a__s", "b.s": "b__s"},
			collisions: []string{"s::b,a"}},

		{name: "bare, invalid names fall back to the sanitized prefixed form", mode: bare, offers: offers{"a": {"get sum", "ünï", "v1.list_items", long}},
			want: map[string]string{"a.get sum": "a__get_sum", "a.ünï": "a___n_", "a.v1.list_items": "v1.list_items"}},
		{name: "auto, invalid names fall back too", mode: auto, offers: offers{"a": {"get sum"}, "b": {"get sum"}},
			want: map[string]string{"a.get sum": "a__get_sum", "b.get sum": "b__get_sum"}},
		{name: "prefixed keeps the 64-character rule", mode: prefixed, offers: offers{"a": {"v1.list"}},
			want: map[string]string{"a.v1.list": "a__v1_list"}},
		{name: "128 characters is still bare", mode: bare, offers: offers{"a": {strings.Repeat("y", 128)}},
			want: map[string]string{"a." + strings.Repeat("y", 128): strings.Repeat("y", 128)}},

		{name: "isogate's own tool names", mode: bare, offers: offers{"a": {"search_tools", "read_result"}, "b": {"call_tool_chain"}},
			want:       map[string]string{"a.search_tools": "a__search_tools", "a.read_result": "a__read_result", "b.call_tool_chain": "b__call_tool_chain"},
			collisions: []string{"call_tool_chain:isogate:isogate,b", "read_result:isogate:isogate,a", "search_tools:isogate:isogate,a"}},
		{name: "prompts may use isogate's tool names", mode: auto, kind: KindPrompt, offers: offers{"a": {"search_tools"}},
			want: map[string]string{"a.search_tools": "search_tools"}},

		{name: "a bare name beats a prefixed one spelled the same", mode: auto, offers: offers{"a": {"x"}, "b": {"a__x"}, "c": {"x"}},
			want:       map[string]string{"b.a__x": "a__x", "c.x": "c__x"},
			collisions: []string{"x::a,c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kind := cmpOr(tt.kind, KindTool)
			got, collisions := assignNames(t, tt.mode, tt.prio, tt.order, kind, tt.offers)
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%s → %q, want %q (all: %v)", k, got[k], v, got)
				}
			}
			if !slices.Equal(collisions, tt.collisions) {
				t.Errorf("collisions %q, want %q", collisions, tt.collisions)
			}
			again, _ := assignNames(t, tt.mode, tt.prio, tt.order, kind, tt.offers)
			if !reflect.DeepEqual(got, again) {
				t.Errorf("not deterministic: %v, then %v", got, again)
			}
		})
	}
	// The long name is hashed in every mode, under 64 characters.
	for _, mode := range config.ToolNameModes {
		got, _ := assignNames(t, mode, nil, nil, KindTool, offers{"a": {long}})
		if n := got["a."+long]; !strings.HasPrefix(n, "a__xxx") || len(n) > MaxPassthroughName || n[len(n)-9] != '_' {
			t.Errorf("%s: %d-character name → %q, want a hashed prefixed name", mode, len(long), n)
		}
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// TestNamingStability: adding a backend changes only the names it shares
// with the others.
func TestNamingStability(t *testing.T) {
	before := offers{"a": {"search", "x", "get sum"}, "b": {"y", "z"}}
	for _, mode := range config.ToolNameModes {
		t.Run(string(mode), func(t *testing.T) {
			old, _ := assignNames(t, mode, nil, nil, KindTool, before)

			unrelated := maps.Clone(before)
			unrelated["c"] = []string{"w", "v"}
			now, cs := assignNames(t, mode, nil, nil, KindTool, unrelated)
			for k, v := range old {
				if now[k] != v {
					t.Errorf("unrelated backend: %s %q → %q", k, v, now[k])
				}
			}
			if len(cs) != 0 {
				t.Errorf("unrelated backend: collisions %v", cs)
			}

			// "0" sorts before "a": first in configuration order.
			colliding := maps.Clone(before)
			colliding["0"] = []string{"search"}
			now, _ = assignNames(t, mode, nil, nil, KindTool, colliding)
			for k, v := range old {
				changed := now[k] != v
				want := k == "a.search" && mode != config.ToolNamesPrefixed
				if changed != want {
					t.Errorf("colliding backend: %s %q → %q (changed %v, want %v)", k, v, now[k], changed, want)
				}
			}
		})
	}
}

// TestToolNamesOverCatalog: ToolNames names catalogue entries and agrees
// with PassthroughNames in prefixed mode.
func TestToolNamesOverCatalog(t *testing.T) {
	c := catalog.New()
	c.SetBackend("a", nil, []*mcp.Tool{{Name: "echo"}, {Name: "get sum"}})
	c.SetBackend("b", nil, []*mcp.Tool{{Name: "echo"}, {Name: "add"}})
	names, cs := ToolNames(c.Entries(), config.ToolNamesBare, nil, nil)
	got := map[string]string{}
	for e, n := range names {
		got[e.Name] = n
	}
	want := map[string]string{"a.echo": "echo", "a.get sum": "a__get_sum", "b.echo": "b__echo", "b.add": "add"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("bare: %v, want %v", got, want)
	}
	if len(cs) != 1 || cs[0].Winner != "a" || !reflect.DeepEqual(cs[0].Listed, map[string]string{"a": "echo", "b": "b__echo"}) {
		t.Errorf("collisions %+v", cs)
	}
	prefixed, cs := ToolNames(c.Entries(), config.ToolNamesPrefixed, nil, nil)
	if !reflect.DeepEqual(prefixed, PassthroughNames(c.Entries())) || cs != nil {
		t.Errorf("prefixed differs from PassthroughNames: %v, %v", prefixed, cs)
	}
}

// TestNameCollisionsLoggedOnce: a collision is logged once however often
// the names are computed again, and again when it changes.
func TestNameCollisionsLoggedOnce(t *testing.T) {
	var logs bytes.Buffer
	nc := &nameCollisions{logger: slog.New(slog.NewTextHandler(&logs, nil))}
	n := naming{mode: config.ToolNamesBare}
	o := offers{"a": {"search"}, "b": {"search"}}
	for range 3 {
		_, cs := n.assign(KindTool, o.pairs())
		nc.set(KindTool, cs)
	}
	_, cs := n.assign(KindPrompt, o.pairs())
	nc.set(KindPrompt, cs)
	text := logs.String()
	if got := strings.Count(text, "level=WARN"); got != 2 {
		t.Fatalf("%d warnings, want 2 (one per kind):\n%s", got, text)
	}
	for _, want := range []string{`backends \"a\" and \"b\" both offer tool \"search\"; \"a\" keeps the name`, `\"b\" as \"b__search\"`, "prompt"} {
		if !strings.Contains(text, want) {
			t.Errorf("log lacks %s:\n%s", want, text)
		}
	}
	if l := nc.list(); len(l) != 2 || l[0].Kind != KindTool || l[1].Kind != KindPrompt {
		t.Errorf("list: %+v", l)
	}
	if len(nc.of("a")) != 2 || len(nc.of("c")) != 0 {
		t.Errorf("of: %+v, %+v", nc.of("a"), nc.of("c"))
	}
	// Gone: not listed any more, and logged again if it comes back.
	nc.set(KindTool, nil)
	if l := nc.list(); len(l) != 1 {
		t.Errorf("after it is gone: %+v", l)
	}
	o["c"] = []string{"search"}
	_, cs = n.assign(KindTool, o.pairs())
	nc.set(KindTool, cs)
	if !strings.Contains(logs.String(), `backends \"a\", \"b\" and \"c\" all offer tool`) {
		t.Errorf("a third backend is not logged:\n%s", logs.String())
	}
}
