package programs

// Drift: when a backend's tools change, saved programs are vetted again
// against the new catalogue (the save-time [Vetter]); a version that no
// longer passes is marked stale in its head, with the diagnostics, so
// that every replica sees it, and a call of it is refused with
// PROGRAM_STALE; a later check that passes clears the mark.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/isogate/isogate/internal/kv"
	"github.com/isogate/isogate/v8sandbox"
)

// CodeStale: the version called no longer checks against the catalogue
// (a backend's tools changed since it was saved); the message carries the
// diagnostics. Save it again fixed, or make a version that checks current.
const CodeStale v8sandbox.Code = "PROGRAM_STALE"

// Staleness is why a version is stale.
type Staleness struct {
	// Code is the vetter's refusal: TYPECHECK_FAILED or PLAN_DENIED.
	Code v8sandbox.Code `json:"code"`
	// Diagnostics are the vetter's message.
	Diagnostics string `json:"diagnostics"`
	// Catalog is the fingerprint of the catalogue it was checked against.
	Catalog string    `json:"catalog"`
	At      time.Time `json:"at"`
}

// staleErr is the refusal of a call of version ver of h, if it is stale.
func staleErr(h *Head, ver int) error {
	if h == nil {
		return nil
	}
	s := h.Stale[ver]
	if s == nil {
		return nil
	}
	return v8sandbox.Errorf(CodeStale, "%s@%d no longer checks against the tools its backends now offer (checked %s, %s); "+
		"save it again fixed, or make a version that checks current. %s",
		h.Name, ver, s.At.Format(time.RFC3339), s.Code, s.Diagnostics)
}

// verdicts are the codes of a vetting that judged the program: any other
// refusal (the checker loading or timing out, the store down) decides
// nothing, and the version keeps the verdict it had.
var verdicts = []v8sandbox.Code{"TYPECHECK_FAILED", "PLAN_DENIED"}

// Catalogue is what drift checks programs against.
type Catalogue interface {
	// Fingerprint identifies the tools and schemas programs are checked
	// against (and what policy denies): equal fingerprints, equal
	// verdicts.
	Fingerprint() string
	// Settled reports whether a backend's tools are known: it is
	// connected, or its tools are cached, or it is not configured (its
	// tools are gone). A version that may call a backend not settled is
	// not judged. Settled("") reports whether every configured backend
	// is (a program whose plan is partial may call any).
	Settled(backend string) bool
}

// StaleVersion is a stale version of a program.
type StaleVersion struct {
	Owner   string `json:"owner"`
	Name    string `json:"name"`
	Version int    `json:"version"`
	*Staleness
}

// Ref is "owner/name@version".
func (s StaleVersion) Ref() string { return s.Owner + "/" + s.Name + "@" + strconv.Itoa(s.Version) }

// Stale lists every stale version, by owner, name and version.
func (p *Programs) Stale(ctx context.Context) ([]StaleVersion, error) {
	ix, err := p.current(ctx)
	if err != nil {
		return nil, err
	}
	var out []StaleVersion
	for _, h := range ix.heads {
		for v, s := range h.Stale {
			out = append(out, StaleVersion{Owner: h.Owner, Name: h.Name, Version: v, Staleness: s})
		}
	}
	slices.SortFunc(out, func(a, b StaleVersion) int {
		if c := strings.Compare(a.Owner, b.Owner); c != 0 {
			return c
		}
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return a.Version - b.Version
	})
	return out, nil
}

// Counts returns how many programs are saved and how many versions are
// stale.
func (p *Programs) Counts(ctx context.Context) (saved, stale int, err error) {
	ix, err := p.current(ctx)
	if err != nil {
		return 0, 0, err
	}
	for _, h := range ix.heads {
		stale += len(h.Stale)
	}
	return len(ix.heads), stale, nil
}

// CheckReport is what a check of every saved version found.
type CheckReport struct {
	// Checked counts the versions judged, stale or not (neither skipped
	// as already checked against this catalogue nor undecided).
	Checked int
	// Stale are the versions that do not check.
	Stale []StaleVersion
	// Undecided are the versions ("owner/name@v") that could not be
	// judged: a backend they call is not settled, or the checker did not
	// answer; with why.
	Undecided map[string]string
}

// CheckOptions configure [Programs.Check].
type CheckOptions struct {
	// Catalogue is what the versions are checked against. Required.
	Catalogue Catalogue
	// Record writes each verdict that changed to the store (the version
	// marked stale, or no longer); false: a dry run (isogate check
	// --saved).
	Record bool
	// Seen, if set, remembers the fingerprint each version ("owner/name@v")
	// was last judged at: a version judged at the current one is skipped,
	// and judging it sets it.
	Seen map[string]string
}

// Check vets every saved version against the catalogue, one after the
// other.
func (p *Programs) Check(ctx context.Context, o CheckOptions) (*CheckReport, error) {
	ix, err := p.current(ctx)
	if err != nil {
		return nil, err
	}
	heads := make([]*Head, 0, len(ix.heads))
	for _, h := range ix.heads {
		heads = append(heads, h)
	}
	slices.SortFunc(heads, func(a, b *Head) int {
		return strings.Compare(a.Owner+"\x00"+a.Name, b.Owner+"\x00"+b.Name)
	})
	rep := &CheckReport{Undecided: map[string]string{}}
	for _, h := range heads {
		_, versions, err := p.Versions(ctx, Caller{Admin: true}, h.Owner, h.Name)
		if err != nil {
			return rep, fmt.Errorf("program %s/%s: %w", h.Owner, h.Name, err)
		}
		for _, v := range versions {
			if err := ctx.Err(); err != nil {
				return rep, err
			}
			fp := o.Catalogue.Fingerprint()
			ref := StaleVersion{Owner: v.Owner, Name: v.Name, Version: v.Version}.Ref()
			// What stands: the verdict in the store.
			standing := func() {
				if s := h.Stale[v.Version]; s != nil {
					rep.Stale = append(rep.Stale, StaleVersion{Owner: v.Owner, Name: v.Name, Version: v.Version, Staleness: s})
				}
			}
			if at, ok := o.Seen[ref]; ok && at == fp {
				standing()
				continue
			}
			if b := unsettled(o.Catalogue, v); b != "" {
				rep.Undecided[ref] = "backend " + b + " is not connected"
				standing()
				continue
			}
			var stale *Staleness
			if _, err := p.opts.Vet.Vet(ctx, v.Name, v.Code); err != nil {
				code := v8sandbox.CodeOf(err)
				if !slices.Contains(verdicts, code) {
					rep.Undecided[ref] = err.Error()
					standing()
					continue
				}
				stale = &Staleness{Code: code, Catalog: fp, At: time.Now().UTC(),
					Diagnostics: strings.TrimPrefix(strings.TrimPrefix(err.Error(), string(code)+": "), "the program was not saved: ")}
				rep.Stale = append(rep.Stale, StaleVersion{Owner: v.Owner, Name: v.Name, Version: v.Version, Staleness: stale})
			}
			// Judged: counted once, never also as undecided (a checker
			// that did not answer left it undecided above).
			rep.Checked++
			if o.Record {
				if err := p.mark(ctx, v.Owner, v.Name, v.Version, stale); err != nil {
					rep.Undecided[ref] = err.Error()
					continue
				}
			}
			if o.Seen != nil {
				o.Seen[ref] = fp
			}
		}
	}
	return rep, nil
}

// unsettled returns a backend v may call that is not settled ("" if none):
// one its plan names, or any backend of the catalogue for a partial plan
// (it may call tools no plan names).
func unsettled(c Catalogue, v *Version) string {
	for _, call := range v.Calls {
		if b, _, _ := strings.Cut(call, "."); !c.Settled(b) {
			return b
		}
	}
	if v.Partial && !c.Settled("") {
		return "(any: the program may call tools its plan cannot name)"
	}
	return ""
}

// mark records version ver of owner's name as stale (s) or not (nil), if
// that changes its head. Listing is not changed (no OnChange): a stale
// program stays listed, and a call of it says why it is refused.
func (p *Programs) mark(ctx context.Context, owner, name string, ver int, s *Staleness) error {
	hk := headKey(owner, name)
	err := p.opts.Store.Update(ctx, Namespace, []string{hk, genKey}, func(cur map[string][]byte) ([]kv.Change, error) {
		raw, ok := cur[hk]
		if !ok {
			return nil, errUnchanged // deleted meanwhile
		}
		var h Head
		if err := json.Unmarshal(raw, &h); err != nil {
			return nil, err
		}
		if (h.Stale[ver] == nil) == (s == nil) && (s == nil || h.Stale[ver].Diagnostics == s.Diagnostics) {
			return nil, errUnchanged
		}
		if s == nil {
			delete(h.Stale, ver)
			if len(h.Stale) == 0 {
				h.Stale = nil
			}
		} else {
			if h.Stale == nil {
				h.Stale = map[int]*Staleness{}
			}
			h.Stale[ver] = s
		}
		return withGen(cur, kv.Change{Key: hk, Value: mustJSON(&h)}), nil
	})
	if errors.Is(err, errUnchanged) {
		return nil
	}
	if err != nil {
		return storeErr(err)
	}
	if s != nil {
		p.opts.Logger.Warn("saved program is stale: it no longer checks against the catalogue", "program", owner+"/"+name+"@"+strconv.Itoa(ver), "code", s.Code)
	} else {
		p.opts.Logger.Info("saved program checks again", "program", owner+"/"+name+"@"+strconv.Itoa(ver))
	}
	return nil
}

// errUnchanged aborts a mark that changes nothing.
var errUnchanged = errors.New("unchanged")

// DriftOptions configure [Programs.Drift].
type DriftOptions struct {
	// Catalogue is what the versions are checked against. Required.
	Catalogue Catalogue
	// Retry is how long to wait before checking again versions that could
	// not be judged because the checker or the store did not answer;
	// default [DefaultDriftRetry].
	Retry time.Duration
}

// DefaultDriftRetry is DriftOptions.Retry's default.
const DefaultDriftRetry = 30 * time.Second

// Drift checks saved programs again, in the background, when told that
// the catalogue changed ([Drift.Kick]): one pass at a time, each version
// at most once per catalogue fingerprint (on this replica).
type Drift struct {
	p      *Programs
	o      DriftOptions
	kick   chan struct{}
	cancel context.CancelFunc
	done   chan struct{}
	passes chan struct{} // closed and replaced after each pass (tests wait on it)
	mu     sync.Mutex
}

// Drift starts the background checks; Close stops them.
func (p *Programs) Drift(o DriftOptions) *Drift {
	if o.Retry <= 0 {
		o.Retry = DefaultDriftRetry
	}
	ctx, cancel := context.WithCancel(context.Background())
	d := &Drift{p: p, o: o, kick: make(chan struct{}, 1), cancel: cancel, done: make(chan struct{}), passes: make(chan struct{})}
	go d.loop(ctx)
	return d
}

// Kick asks for a pass: the catalogue changed. Kicks during a pass make
// one more pass after it.
func (d *Drift) Kick() {
	if d == nil {
		return
	}
	select {
	case d.kick <- struct{}{}:
	default:
	}
}

// Passed returns a channel closed when the next pass ends.
func (d *Drift) Passed() <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.passes
}

// Close stops the checks and waits for the pass under way.
func (d *Drift) Close() error {
	if d == nil {
		return nil
	}
	d.cancel()
	<-d.done
	return nil
}

func (d *Drift) loop(ctx context.Context) {
	defer close(d.done)
	seen := map[string]string{}
	var retry *time.Timer
	defer func() {
		if retry != nil {
			retry.Stop()
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case <-d.kick:
		}
		rep, err := d.p.Check(ctx, CheckOptions{Catalogue: d.o.Catalogue, Record: true, Seen: seen})
		if ctx.Err() != nil {
			return
		}
		undecided := err != nil
		if err != nil {
			d.p.opts.Logger.Warn("saved programs: the drift check stopped", "err", err)
		}
		if rep != nil {
			for ref, why := range rep.Undecided {
				// A backend not settled kicks again when its tools come.
				if !strings.HasPrefix(why, "backend ") {
					undecided = true
				}
				d.p.opts.Logger.Debug("saved programs: a version could not be checked", "program", ref, "why", why)
			}
		}
		if undecided && retry == nil {
			retry = time.AfterFunc(d.o.Retry, d.Kick)
		} else if undecided {
			retry.Reset(d.o.Retry)
		}
		d.mu.Lock()
		close(d.passes)
		d.passes = make(chan struct{})
		d.mu.Unlock()
	}
}
