package programs

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/isogate/isogate/v8sandbox"
)

// CallCount is how often a version was called on this replica since it
// started, and when last.
type CallCount struct {
	Count int64
	Last  time.Time
}

// callLog counts the calls of each version: each run that calls it
// (Called), not the reads of checks, approvals or skills.
type callLog struct {
	mu sync.Mutex
	by map[string]map[int]*CallCount // owner + "\x00" + name → version →
}

func (l *callLog) add(owner, name string, ver int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.by == nil {
		l.by = map[string]map[int]*CallCount{}
	}
	k := owner + "\x00" + name
	if l.by[k] == nil {
		l.by[k] = map[int]*CallCount{}
	}
	c := l.by[k][ver]
	if c == nil {
		c = &CallCount{}
		l.by[k][ver] = c
	}
	c.Count++
	c.Last = time.Now().UTC()
}

// Called counts a call of v: a run that calls it (directly, as its tool
// or a task, or from a program). Checks, approvals and skills that read a
// version are not calls.
func (p *Programs) Called(v *Version) {
	p.calls.add(v.Owner, v.Name, v.Version)
}

// Calls returns the calls of each version of owner's program name on
// this replica (resolved to run: by its tool, from a program or as a
// task), by version.
func (p *Programs) Calls(owner, name string) map[int]CallCount {
	p.calls.mu.Lock()
	defer p.calls.mu.Unlock()
	out := map[int]CallCount{}
	for v, c := range p.calls.by[owner+"\x00"+name] {
		out[v] = *c
	}
	return out
}

// Saved programs call saved programs (issue 45): a program's code names
// the programs it calls as programs.<name>(args) (or programs["name"]);
// a run gets those the caller may call, and those they name in turn, as
// async functions (codemode's Library). The names are found in the code's
// text, so a program reaches only programs its code names; the graph they
// make must be acyclic and at most MaxDepth deep, or the run is refused
// with CodeDepth before anything of it runs.

// CodeDepth is the code of a run refused because the saved programs it
// calls call each other in a cycle or deeper than MaxDepth.
const CodeDepth v8sandbox.Code = "PROGRAM_DEPTH"

// MaxDepth bounds the chain of saved programs a run may call: the run
// calls a (1), a calls b (2), … up to MaxDepth.
const MaxDepth = 4

// callRE finds programs.<name> and programs["name"] (or a version of
// it, programs["name@3"]) in code.
var callRE = regexp.MustCompile(`\bprograms\s*(?:\?\.|\.)\s*([a-z][a-z0-9_]*)|\bprograms\s*\[\s*["']([a-z][a-z0-9_]*(?:@[1-9][0-9]*)?)["']\s*\]`)

// Names are the program names (or name@version) code calls as
// programs.<name>, in order, each once.
func Names(code string) []string {
	if !strings.Contains(code, "programs") {
		return nil
	}
	var out []string
	for _, m := range callRE.FindAllStringSubmatch(code, -1) {
		name := m[1] + m[2]
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// Heads returns every program's head, by owner then name: the operator's
// view (the console).
func (p *Programs) Heads(ctx context.Context) ([]*Head, error) {
	ix, err := p.current(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*Head, 0, len(ix.heads))
	for _, h := range ix.heads {
		out = append(out, h)
	}
	slices.SortFunc(out, func(a, b *Head) int {
		return cmp.Or(strings.Compare(a.Owner, b.Owner), strings.Compare(a.Name, b.Name))
	})
	return out, nil
}

// SetCurrentOf makes version ver of owner's program name current: the
// caller's own, or any principal's for an admin.
func (p *Programs) SetCurrentOf(ctx context.Context, c Caller, owner, name string, ver int) error {
	if owner == "" || owner == c.Owner() {
		return p.SetCurrent(ctx, c, name, ver)
	}
	if !c.Admin {
		return v8sandbox.Errorf(CodeForbidden, "only an admin (server.auth.admins) changes another principal's program")
	}
	if err := CheckName(name); err != nil {
		return err
	}
	return p.updateHead(ctx, owner, name, ver, func(h *Head, v *Version) error {
		h.Current, h.Cur = v.Version, summaryOf(v)
		return nil
	})
}

// Callee is a saved program a run may call, resolved for its caller.
type Callee struct {
	// Version is the version the caller runs (nil when DeniedBy is set).
	Version *Version
	// Calls are the names of the programs its code calls that the caller
	// may see (the others are not in the run: calling one fails).
	Calls []string
	// DeniedBy is the rule that denies the program to the caller.
	DeniedBy string
}

// Callees resolves the saved programs code calls, for c: roots are those
// it names that exist for c, all every program reachable from them by
// name. deniedBy says which rule denies a program to c ("" none): a denied
// program is in all, without its version, and nothing it calls is
// followed. A name no program of c's has is left out. A store that does
// not answer fails (STORE_UNAVAILABLE: what the run may call is unknown).
func (p *Programs) Callees(ctx context.Context, c Caller, code string, deniedBy func(name string) string) (roots []string, all map[string]*Callee, err error) {
	return p.callees(ctx, c, "", code, deniedBy)
}

// CalleesAs is Callees for code about to be saved as program self's
// current version: self resolves to code wherever the graph names it, and
// the graph is checked from self, as a run calling it will be. So code
// that calls self, or calls a program that calls self, is refused as the
// cycle it would be, and a chain under self deeper than MaxDepth as too
// deep (CodeDepth). Self is not in all unless code reaches it.
func (p *Programs) CalleesAs(ctx context.Context, c Caller, self, code string, deniedBy func(name string) string) (roots []string, all map[string]*Callee, err error) {
	return p.callees(ctx, c, self, code, deniedBy)
}

// callees resolves code's callees, code being program self's (none when
// self is "").
func (p *Programs) callees(ctx context.Context, c Caller, self, code string, deniedBy func(name string) string) (roots []string, all map[string]*Callee, err error) {
	names := Names(code)
	if len(names) == 0 {
		return nil, nil, nil
	}
	all = map[string]*Callee{}
	var own *Callee // self's, with code
	if self != "" {
		own = &Callee{Version: &Version{Name: self, Code: code}}
		all[self] = own
	}
	var resolve func(name string) (*Callee, error)
	resolve = func(name string) (*Callee, error) {
		if cl, ok := all[name]; ok {
			return cl, nil
		}
		base, _, _ := strings.Cut(name, "@")
		if rule := deniedBy(base); rule != "" {
			cl := &Callee{DeniedBy: rule}
			all[name] = cl
			return cl, nil
		}
		v, err := p.Resolve(ctx, c, name)
		if v8sandbox.CodeOf(err) == CodeNotFound {
			all[name] = nil
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		cl := &Callee{Version: v}
		all[name] = cl
		for _, n := range Names(v.Code) {
			callee, err := resolve(n)
			if err != nil {
				return nil, err
			}
			if callee != nil {
				cl.Calls = append(cl.Calls, n)
			}
		}
		return cl, nil
	}
	for _, n := range names {
		cl, err := resolve(n)
		if err != nil {
			return nil, nil, err
		}
		if cl != nil {
			roots = append(roots, n)
		}
	}
	for name, cl := range all {
		if cl == nil {
			delete(all, name)
		}
	}
	from := roots
	if own != nil {
		own.Calls, from = roots, []string{self}
	}
	if err := checkDepth(from, all); err != nil {
		return nil, nil, err
	}
	if own != nil && !reaches(roots, all, self) {
		delete(all, self)
	}
	return roots, all, nil
}

// reaches reports whether name is among roots or the programs they call.
// (Only a graph checkDepth accepted: acyclic.)
func reaches(roots []string, all map[string]*Callee, name string) bool {
	for _, r := range roots {
		if r == name || (all[r] != nil && reaches(all[r].Calls, all, name)) {
			return true
		}
	}
	return false
}

// checkDepth refuses a graph of programs with a cycle or a chain longer
// than MaxDepth, naming it.
func checkDepth(roots []string, all map[string]*Callee) error {
	var path []string
	var walk func(name string) error
	walk = func(name string) error {
		if i := slices.Index(path, name); i >= 0 {
			return v8sandbox.Errorf(CodeDepth, "the saved programs call each other in a cycle (%s): a program may not call itself, directly or through others",
				strings.Join(append(slices.Clone(path[i:]), name), " → "))
		}
		path = append(path, name)
		defer func() { path = path[:len(path)-1] }()
		if len(path) > MaxDepth {
			return v8sandbox.Errorf(CodeDepth, "saved programs call saved programs %d deep (%s), more than %d", len(path), strings.Join(path, " → "), MaxDepth)
		}
		for _, n := range all[name].Calls {
			if err := walk(n); err != nil {
				return err
			}
		}
		return nil
	}
	for _, r := range roots {
		if err := walk(r); err != nil {
			return err
		}
	}
	return nil
}

// CallCode is the program a direct call of v with arguments runs: one
// call of v pinned to its version, programs["name@3"](args), so that the
// run inlines v as a run naming it does (its code compiled once per
// version) and its journal says which version ran. The arguments are
// checked against v's parameters first (INVALID_ARGUMENTS: nothing ran).
func CallCode(v *Version, arguments json.RawMessage) (string, error) {
	args, err := checkArguments(v, arguments)
	if err != nil {
		return "", err
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, args); err != nil { // checked JSON: cannot fail
		return "", err
	}
	ref, _ := json.Marshal(v.Ref())
	return "return await programs[" + string(ref) + "](" + compact.String() + ")", nil
}
