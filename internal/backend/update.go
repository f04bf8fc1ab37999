package backend

import (
	"context"
	"log/slog"
	"reflect"
	"slices"

	"github.com/isogate/isogate/config"
)

// UpdateResult says what [Manager.Update] changed, by backend name.
type UpdateResult struct {
	Added, Removed, Changed []string
}

// Empty reports whether the update changed nothing.
func (r UpdateResult) Empty() bool {
	return len(r.Added)+len(r.Removed)+len(r.Changed) == 0
}

// Update replaces the set of backends with specs (a configuration reload):
// backends with a new name are started, backends missing from specs are
// stopped as [Manager.Close] stops them, and backends whose spec changed
// are stopped and started again with the new spec. Backends whose spec is
// unchanged keep running untouched, with their connection and the calls in
// flight. Calls in flight on a stopped backend are cancelled. Before
// [Manager.Start], Update only replaces the set. It fails only on a closed
// manager.
func (m *Manager) Update(specs []Spec) (UpdateResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return UpdateResult{}, ErrClosed
	}
	old := m.current()
	next := &backendSet{backends: make(map[string]*backend, len(specs))}
	var res UpdateResult
	for _, spec := range specs {
		if _, dup := next.backends[spec.Name]; dup {
			m.log.Error("duplicate backend name; ignoring all but the first", slog.String("backend", spec.Name))
			continue
		}
		next.names = append(next.names, spec.Name)
		fresh := newBackend(m, spec)
		prev := old.backends[spec.Name]
		switch {
		case prev != nil && sameSpec(prev.spec, fresh.spec):
			next.backends[spec.Name] = prev
			continue
		case prev != nil:
			res.Changed = append(res.Changed, spec.Name)
		default:
			res.Added = append(res.Added, spec.Name)
		}
		fresh.loadCache()
		next.backends[spec.Name] = fresh
	}
	for _, name := range old.names {
		if _, ok := next.backends[name]; !ok {
			res.Removed = append(res.Removed, name)
		}
	}
	slices.Sort(next.names)
	slices.Sort(res.Added)
	slices.Sort(res.Changed)

	m.retired = slices.DeleteFunc(m.retired, func(b *backend) bool { return isDone(b) })
	for _, name := range slices.Concat(res.Removed, res.Changed) {
		if stop := m.stops[name]; stop != nil {
			stop()
			delete(m.stops, name)
		}
		m.retired = append(m.retired, old.backends[name])
	}
	m.set.Store(next)
	if m.started {
		for _, name := range slices.Concat(res.Added, res.Changed) {
			m.startLocked(next.backends[name])
		}
	}
	return res, nil
}

// startLocked starts b's supervisor under its own context, so that Update
// can stop it alone. m.mu is held and the manager is started.
func (m *Manager) startLocked(b *backend) {
	if b.invalid == nil {
		// Synchronously, so the catalogue is searchable at once.
		b.announceCachedTools()
	}
	ctx, stop := context.WithCancel(m.runCtx)
	m.stops[b.spec.Name] = stop
	m.running.Add(1)
	go func() {
		defer m.running.Done()
		b.run(ctx)
	}()
}

// sameSpec compares two normalized specs; a Dial function has no identity,
// so custom backends with the same name and settings are the same. The
// tool policy, the priority, the description and Disabled are not the
// manager's: a change to them alone keeps the backend running.
func sameSpec(a, b Spec) bool {
	a.Dial, b.Dial = nil, nil
	a.Description, b.Description = "", ""
	a.Tools, b.Tools = config.ToolPolicy{}, config.ToolPolicy{}
	a.Priority, b.Priority = 0, 0
	a.Disabled, b.Disabled = false, false
	return reflect.DeepEqual(a, b)
}

func isDone(b *backend) bool {
	select {
	case <-b.done:
		return true
	default:
		return false
	}
}
