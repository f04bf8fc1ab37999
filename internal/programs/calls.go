package programs

import (
	"cmp"
	"context"
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

// callLog counts the calls of each version (each Resolve that found it).
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
