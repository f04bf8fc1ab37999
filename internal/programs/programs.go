// Package programs keeps saved programs: code-mode programs that worked,
// saved under a name with a description and parameters, so that they can
// be called again as tools (issue 45). Versions are immutable (name@3);
// the latest saved is current until an earlier one is made current again.
// A program is private to the principal that saved it until an admin
// publishes one of its versions to everyone or to named principals, groups
// or scopes.
//
// At save a program is vetted ([Vetter]): type-checked against the
// catalogue as sandbox.typecheck: strict would, its plan computed and
// policy applied to the plan. A refusal keeps the vetter's code
// (TYPECHECK_FAILED, PLAN_DENIED, …) and nothing is stored.
//
// Programs live in a [kv.Store] (the namespace [Namespace]), so that they
// outlive the process (bbolt) or are shared by replicas (Redis). Listing
// and resolving read one generation counter from the store and answer
// from an in-process index of every program's head while the counter is
// unchanged.
package programs

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/isogate/isogate/internal/authn"
	"github.com/isogate/isogate/internal/kv"
	"github.com/isogate/isogate/v8sandbox"
)

// The error codes of saved programs.
const (
	// CodeNotFound: no program of that name (or version) the caller may
	// see.
	CodeNotFound v8sandbox.Code = "PROGRAM_NOT_FOUND"
	// CodeInvalid: a name, description, parameters or code that cannot be
	// saved as given (the message says which and why).
	CodeInvalid v8sandbox.Code = "PROGRAM_INVALID"
	// CodeForbidden: the caller may not do that to the program (publish
	// without being an admin, change another principal's program).
	CodeForbidden v8sandbox.Code = "PROGRAM_FORBIDDEN"
	// CodeStoreUnavailable: the store of saved programs did not answer
	// (file held by another process, Redis down); retryable. Nothing was
	// saved, and no program ran.
	CodeStoreUnavailable v8sandbox.Code = "STORE_UNAVAILABLE"
)

// Namespace is the store namespace of saved programs.
const Namespace = "programs"

// Bounds of what is saved.
const (
	// MaxNameLen is the longest program name.
	MaxNameLen = 48
	// MaxDescriptionBytes bounds a description.
	MaxDescriptionBytes = 2048
	// MaxCodeBytes bounds a program's code.
	MaxCodeBytes = 256 << 10
	// MaxParamsBytes bounds its parameters (schema or signature).
	MaxParamsBytes = 16 << 10
)

// nameRE is a program's name: lowercase letters, digits and single
// underscores, starting with a letter: an identifier in programs
// (programs.name) and part of a tool name every model API accepts.
var nameRE = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// ToolPrefix starts the tool name of a saved program in tools/list.
const ToolPrefix = "program_"

// ToolName is the name a program is listed under as a tool.
func ToolName(name string) string { return ToolPrefix + name }

// Caller is who asks.
type Caller struct {
	// Principal is the authenticated caller; nil when the gateway has no
	// authentication (one local user).
	Principal *authn.Principal
	// Admin may publish any principal's programs (server.auth.admins).
	Admin bool
}

// Owner is the key a caller's programs are kept under.
func (c Caller) Owner() string {
	if c.Principal == nil {
		return LocalOwner
	}
	return c.Principal.Name
}

// LocalOwner owns the programs saved on a gateway without authentication.
const LocalOwner = "local"

// sees reports whether the caller is one of a publication's audience.
func (c Caller) sees(to []string) bool {
	if slices.Contains(to, Everyone) {
		return true
	}
	return c.Principal.Matches(to)
}

// Everyone, in a publication's audience, is every principal.
const Everyone = "*"

// Version is one saved version of a program: immutable once saved.
type Version struct {
	Name        string `json:"name"`
	Owner       string `json:"owner"`
	Version     int    `json:"version"`
	Description string `json:"description"`
	Code        string `json:"code"`
	// Params is the JSON Schema (type object) of the program's args: as
	// given, converted from a TypeScript signature, or inferred from the
	// code's reads of args.
	Params json.RawMessage `json:"params"`
	// Signature is the TypeScript signature it was declared with, if so.
	Signature string `json:"signature,omitempty"`
	// Calls are the tools its plan names ("backend.tool"); Partial marks
	// a program that may also call tools no plan can name.
	Calls   []string        `json:"calls"`
	Partial bool            `json:"partial,omitempty"`
	Plan    json.RawMessage `json:"plan,omitempty"`
	SavedBy string          `json:"saved_by"`
	SavedAt time.Time       `json:"saved_at"`
	// Approved is the plan approval its saver gave at save, if any
	// (server.auth.approval_at_save).
	Approved *Approval `json:"approved,omitempty"`
}

// Approval is a plan approval given when a version was saved: By (the
// saver) approved the calls of Tools (a plan's tools, as JSON) for later
// calls of the version.
type Approval struct {
	By    string          `json:"by"`
	At    time.Time       `json:"at"`
	Tools json.RawMessage `json:"tools"`
}

// Ref is "name@version".
func (v *Version) Ref() string { return v.Name + "@" + strconv.Itoa(v.Version) }

// Summary is what a listing shows of one version.
type Summary struct {
	Version     int             `json:"version"`
	Description string          `json:"description"`
	Params      json.RawMessage `json:"params"`
	Calls       []string        `json:"calls"`
	Partial     bool            `json:"partial,omitempty"`
}

func summaryOf(v *Version) *Summary {
	return &Summary{Version: v.Version, Description: v.Description, Params: v.Params, Calls: v.Calls, Partial: v.Partial}
}

// Publication is a version an admin published, and to whom.
type Publication struct {
	Version int `json:"version"`
	// To are principal names, "group:<g>", "scope:<s>", or "*" for
	// everyone.
	To  []string  `json:"to"`
	By  string    `json:"by"`
	At  time.Time `json:"at"`
	Cur *Summary  `json:"summary"`
}

// Head is a program's current state: its versions' numbers, the current
// one's summary, and its publication.
type Head struct {
	Name      string       `json:"name"`
	Owner     string       `json:"owner"`
	Latest    int          `json:"latest"`
	Current   int          `json:"current"`
	Cur       *Summary     `json:"summary"`
	Published *Publication `json:"published,omitempty"`
	// Stale are the versions that no longer check against the catalogue
	// (drift, stale.go), by version number.
	Stale map[int]*Staleness `json:"stale,omitempty"`
}

// Listed is a program a caller may call: its own current version, or the
// version published to it.
type Listed struct {
	Name  string
	Owner string
	// Own is true for the caller's own program.
	Own bool
	*Summary
	head *Head // its head, for the versions' staleness
}

// Vetter checks a program before it is saved.
type Vetter interface {
	// Vet type-checks code, as program name's current version, against
	// the catalogue as sandbox.typecheck: strict would and applies the
	// caller's policy (in ctx) to its plan, without running it or asking
	// anyone. The saved programs it calls are resolved with name's code
	// being code (Programs.CalleesAs), so a call of name from code, or
	// from a program code reaches, is the cycle it will be. A refusal is
	// an error with a code (v8sandbox.CodeOf), its message the
	// diagnostics.
	Vet(ctx context.Context, name, code string) (*Vetting, error)
}

// Vetting is what vetting found of an accepted program.
type Vetting struct {
	// Calls are the tools the plan names ("backend.tool").
	Calls   []string
	Partial bool
	// Plan is the plan as JSON (kept with the version).
	Plan json.RawMessage
	// Approved are the plan's tools a person approved at save, as JSON,
	// nil when none was asked or approved.
	Approved json.RawMessage
}

// Options configure [New].
type Options struct {
	// Store keeps the programs. Required.
	Store kv.Store
	// Vet checks each program at save. Required.
	Vet Vetter
	// Logger; default slog.Default().
	Logger *slog.Logger
	// OnChange is called after a save, a change of the current version or
	// a publication (tools/list changed).
	OnChange func()
}

// Programs is the saved programs of a gateway.
type Programs struct {
	opts Options

	mu    sync.Mutex
	gen   string // the store's generation the index is of
	index *index // nil: not built yet
	calls callLog
	// versions are versions read from the store, by their key: a version
	// never changes once saved, so a run calling a program reads it once
	// (at most maxCachedVersions; emptied when full).
	versions map[string]*Version
}

// maxCachedVersions bounds the versions kept in memory.
const maxCachedVersions = 1024

// New returns the saved programs over o.Store.
func New(o Options) *Programs {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Programs{opts: o}
}

// keys of the store namespace.
const genKey = "gen"

func headKey(owner, name string) string { return "h/" + url.PathEscape(owner) + "/" + name }
func versionKey(owner, name string, v int) string {
	return fmt.Sprintf("v/%s/%s/%08d", url.PathEscape(owner), name, v)
}

// storeErr turns a store failure into a coded error. A store file another
// process holds is said as such, without advice to retry soon (it cannot
// help while that process runs), and the error still wraps kv.ErrHeld so
// a caller can say what to do instead.
func storeErr(err error) error {
	if errors.Is(err, kv.ErrHeld) {
		return heldError{v8sandbox.Errorf(CodeStoreUnavailable, "the store of saved programs is held by another process (%v)", err), err}
	}
	if errors.Is(err, kv.ErrUnavailable) || errors.Is(err, kv.ErrConflict) {
		return v8sandbox.Errorf(CodeStoreUnavailable, "the store of saved programs did not answer (%v); try again in a few seconds", err)
	}
	return err
}

// heldError is the coded error of a store held by another process: it
// reads and codes as its *v8sandbox.Error and unwraps to both it and the
// store's error.
type heldError struct {
	coded *v8sandbox.Error
	cause error
}

// Error implements the error interface: the coded error's text.
func (e heldError) Error() string { return e.coded.Error() }

// ErrorCode implements [v8sandbox.Coded].
func (e heldError) ErrorCode() v8sandbox.Code { return e.coded.Code }

// Unwrap returns the coded error and the store's.
func (e heldError) Unwrap() []error { return []error{e.coded, e.cause} }

// CheckName validates a program name.
func CheckName(name string) error {
	switch {
	case name == "":
		return v8sandbox.Errorf(CodeInvalid, "a program needs a name")
	case len(name) > MaxNameLen:
		return v8sandbox.Errorf(CodeInvalid, "name %s is %d bytes, at most %d", Quote(name), len(name), MaxNameLen)
	case !nameRE.MatchString(name) || strings.Contains(name, "__") || strings.HasSuffix(name, "_"):
		return v8sandbox.Errorf(CodeInvalid, "name %s: use lowercase letters, digits and single underscores, starting with a letter (e.g. refund_order)", Quote(name))
	}
	return nil
}

// SaveInput is what save_program is given.
type SaveInput struct {
	Name        string
	Description string
	Code        string
	// Params is a JSON Schema of type object, or a JSON string holding a
	// TypeScript signature; empty: inferred from the code.
	Params json.RawMessage
}

// Save vets and stores a new version of the caller's program in.Name; it
// becomes current.
func (p *Programs) Save(ctx context.Context, c Caller, in SaveInput) (*Version, error) {
	if err := CheckName(in.Name); err != nil {
		return nil, err
	}
	switch {
	case strings.TrimSpace(in.Description) == "":
		return nil, v8sandbox.Errorf(CodeInvalid, "a program needs a description: what it does and when to use it (it is the tool's description)")
	case len(in.Description) > MaxDescriptionBytes:
		return nil, v8sandbox.Errorf(CodeInvalid, "the description is %d bytes, at most %d", len(in.Description), MaxDescriptionBytes)
	case strings.TrimSpace(in.Code) == "":
		return nil, v8sandbox.Errorf(CodeInvalid, "a program needs code")
	case len(in.Code) > MaxCodeBytes:
		return nil, v8sandbox.Errorf(CodeInvalid, "the code is %d bytes, at most %d", len(in.Code), MaxCodeBytes)
	case len(in.Params) > MaxParamsBytes:
		return nil, v8sandbox.Errorf(CodeInvalid, "the parameters are %d bytes, at most %d", len(in.Params), MaxParamsBytes)
	}
	params, sig, err := Parameters(in.Params, in.Code)
	if err != nil {
		return nil, err
	}
	vet, err := p.opts.Vet.Vet(ctx, in.Name, in.Code)
	if err != nil {
		return nil, err
	}
	owner := c.Owner()
	v := &Version{Name: in.Name, Owner: owner, Description: strings.TrimSpace(in.Description), Code: in.Code,
		Params: params, Signature: sig, Calls: vet.Calls, Partial: vet.Partial, Plan: vet.Plan,
		SavedBy: owner, SavedAt: time.Now().UTC()}
	if v.Calls == nil {
		v.Calls = []string{}
	}
	if vet.Approved != nil {
		v.Approved = &Approval{By: owner, At: v.SavedAt, Tools: vet.Approved}
	}
	hk := headKey(owner, in.Name)
	for range 16 {
		var head Head
		raw, err := p.opts.Store.Get(ctx, Namespace, hk)
		switch {
		case errors.Is(err, kv.ErrNotFound):
			head = Head{Name: in.Name, Owner: owner}
		case err != nil:
			return nil, storeErr(err)
		default:
			if err := json.Unmarshal(raw, &head); err != nil {
				return nil, fmt.Errorf("program %s: reading its head: %w", in.Name, err)
			}
		}
		v.Version = head.Latest + 1
		vk := versionKey(owner, in.Name, v.Version)
		err = p.opts.Store.Update(ctx, Namespace, []string{hk, vk, genKey}, func(cur map[string][]byte) ([]kv.Change, error) {
			var now Head
			if raw, ok := cur[hk]; ok {
				if err := json.Unmarshal(raw, &now); err != nil {
					return nil, err
				}
			}
			if now.Latest != head.Latest || cur[vk] != nil {
				return nil, errRace
			}
			next := head
			if _, ok := cur[hk]; ok {
				next = now // as stored: a publication or a drift mark made meanwhile is kept
			}
			next.Latest, next.Current, next.Cur = v.Version, v.Version, summaryOf(v)
			return withGen(cur, kv.Change{Key: hk, Value: mustJSON(&next)}, kv.Change{Key: vk, Value: mustJSON(v)}), nil
		})
		if errors.Is(err, errRace) {
			continue
		}
		if err != nil {
			return nil, storeErr(err)
		}
		p.changed()
		return v, nil
	}
	return nil, v8sandbox.Errorf(CodeStoreUnavailable, "program %s: concurrent saves kept racing; try again", in.Name)
}

// errRace means another save took the version number meanwhile.
var errRace = errors.New("raced with another save")

// withGen adds the bump of the generation counter to changes.
func withGen(cur map[string][]byte, changes ...kv.Change) []kv.Change {
	n, _ := strconv.ParseUint(string(cur[genKey]), 10, 64)
	return append(changes, kv.Change{Key: genKey, Value: []byte(strconv.FormatUint(n+1, 10))})
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // plain structs of strings, numbers and raw JSON that was validated
	}
	return b
}

func (p *Programs) changed() {
	if p.opts.OnChange != nil {
		p.opts.OnChange()
	}
}

// index is every program's head as of one generation of the store, with
// what List needs precomputed.
type index struct {
	heads     map[string]*Head    // by owner + "\x00" + name
	own       map[string][]Listed // by owner: its programs' current versions, by name
	published []*Head             // published heads, by name, then owner
}

func buildIndex(heads map[string]*Head) *index {
	ix := &index{heads: heads, own: map[string][]Listed{}}
	for _, h := range heads {
		if h.Cur != nil {
			ix.own[h.Owner] = append(ix.own[h.Owner], Listed{Name: h.Name, Owner: h.Owner, Own: true, Summary: h.Cur})
		}
		if h.Published != nil {
			ix.published = append(ix.published, h)
		}
	}
	for _, l := range ix.own {
		slices.SortFunc(l, func(a, b Listed) int { return strings.Compare(a.Name, b.Name) })
	}
	slices.SortFunc(ix.published, func(a, b *Head) int {
		return cmp.Or(strings.Compare(a.Name, b.Name), strings.Compare(a.Owner, b.Owner))
	})
	return ix
}

// current returns the index, rebuilt when the store's generation is not
// the one it was built at.
func (p *Programs) current(ctx context.Context) (*index, error) {
	gen, err := p.opts.Store.Get(ctx, Namespace, genKey)
	if errors.Is(err, kv.ErrNotFound) {
		gen, err = nil, nil
	}
	if err != nil {
		return nil, storeErr(err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.index != nil && p.gen == string(gen) {
		return p.index, nil
	}
	heads := map[string]*Head{}
	after := ""
	for {
		page, err := p.opts.Store.List(ctx, Namespace, kv.ListOptions{Prefix: "h/", After: after, Limit: kv.MaxListLimit})
		if err != nil {
			return nil, storeErr(err)
		}
		for _, e := range page {
			var h Head
			if err := json.Unmarshal(e.Value, &h); err != nil {
				p.opts.Logger.Warn("saved programs: a head that does not decode is skipped", "key", e.Key, "err", err)
				continue
			}
			heads[h.Owner+"\x00"+h.Name] = &h
		}
		if len(page) < kv.MaxListLimit {
			break
		}
		after = page[len(page)-1].Key
	}
	p.index, p.gen = buildIndex(heads), string(gen)
	return p.index, nil
}

// List returns the programs the caller may call, sorted by name: its own
// (current version), and those published to it whose name it does not
// use itself (of two published under one name, the first owner's in byte
// order).
func (p *Programs) List(ctx context.Context, c Caller) ([]Listed, error) {
	ix, err := p.current(ctx)
	if err != nil {
		return nil, err
	}
	own := ix.own[c.Owner()]
	out := slices.Clone(own)
	added := false
	for _, h := range ix.published {
		if h.Owner == c.Owner() || !c.sees(h.Published.To) {
			continue
		}
		if _, taken := slices.BinarySearchFunc(own, h.Name, func(l Listed, n string) int { return strings.Compare(l.Name, n) }); taken {
			continue
		}
		if n := len(out); added && out[n-1].Name == h.Name {
			continue // a first owner's is listed already
		}
		out = append(out, Listed{Name: h.Name, Owner: h.Owner, Summary: h.Published.Cur})
		added = true
	}
	if added {
		slices.SortStableFunc(out, func(a, b Listed) int { return strings.Compare(a.Name, b.Name) })
		out = slices.CompactFunc(out, func(a, b Listed) bool { return a.Name == b.Name })
	}
	return out, nil
}

// Lookup returns the program the caller calls by name, as List lists it
// (without its code: see Resolve).
func (p *Programs) Lookup(ctx context.Context, c Caller, name string) (*Listed, error) {
	ix, err := p.current(ctx)
	if err != nil {
		return nil, err
	}
	owner := c.Owner()
	if h := ix.heads[owner+"\x00"+name]; h != nil && h.Cur != nil {
		return &Listed{Name: name, Owner: owner, Own: true, Summary: h.Cur, head: h}, nil
	}
	i, _ := slices.BinarySearchFunc(ix.published, name, func(h *Head, n string) int { return strings.Compare(h.Name, n) })
	for ; i < len(ix.published) && ix.published[i].Name == name; i++ {
		if h := ix.published[i]; c.sees(h.Published.To) {
			return &Listed{Name: name, Owner: h.Owner, Summary: h.Published.Cur, head: h}, nil
		}
	}
	return nil, notFound(name)
}

func notFound(ref string) error {
	return v8sandbox.Errorf(CodeNotFound, "no saved program %s that you may call (the programs tool lists them)", Quote(ref))
}

// splitRef splits "name@3" into its name and version (0: none given).
func splitRef(ref string) (string, int, error) {
	name, ver, ok := strings.Cut(ref, "@")
	if !ok {
		return name, 0, nil
	}
	n, err := strconv.Atoi(ver)
	if err != nil || n < 1 {
		return "", 0, v8sandbox.Errorf(CodeInvalid, "%s: a version is a number from 1 (name@3)", Quote(ref))
	}
	return name, n, nil
}

// Resolve returns the version the caller runs for ref ("name" or
// "name@3"): of its own program, the current version or the one named;
// of a program published to it, the published version (naming another
// version of it is not found).
func (p *Programs) Resolve(ctx context.Context, c Caller, ref string) (*Version, error) {
	name, ver, err := splitRef(ref)
	if err != nil {
		return nil, err
	}
	l, err := p.Lookup(ctx, c, name)
	if err != nil {
		return nil, err
	}
	switch {
	case ver == 0:
		ver = l.Version
	case !l.Own && ver != l.Version:
		return nil, notFound(ref)
	}
	if err := staleErr(l.head, ver); err != nil {
		return nil, err
	}
	key := versionKey(l.Owner, name, ver)
	p.mu.Lock()
	cached := p.versions[key]
	p.mu.Unlock()
	if cached != nil {
		v := *cached
		return &v, nil
	}
	raw, err := p.opts.Store.Get(ctx, Namespace, key)
	if errors.Is(err, kv.ErrNotFound) {
		return nil, notFound(ref)
	}
	if err != nil {
		return nil, storeErr(err)
	}
	var v Version
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("program %s: reading version %d: %w", name, ver, err)
	}
	p.mu.Lock()
	if p.versions == nil || len(p.versions) >= maxCachedVersions {
		p.versions = map[string]*Version{}
	}
	kept := v
	p.versions[key] = &kept
	p.mu.Unlock()
	return &v, nil
}

// Versions returns every version of the caller's own program (an admin:
// of owner's), oldest first, and its head.
func (p *Programs) Versions(ctx context.Context, c Caller, owner, name string) (*Head, []*Version, error) {
	if owner == "" {
		owner = c.Owner()
	}
	if owner != c.Owner() && !c.Admin {
		return nil, nil, notFound(name)
	}
	raw, err := p.opts.Store.Get(ctx, Namespace, headKey(owner, name))
	if errors.Is(err, kv.ErrNotFound) {
		return nil, nil, notFound(name)
	}
	if err != nil {
		return nil, nil, storeErr(err)
	}
	var h Head
	if err := json.Unmarshal(raw, &h); err != nil {
		return nil, nil, err
	}
	var out []*Version
	prefix := strings.TrimSuffix(versionKey(owner, name, 0), "00000000")
	after := ""
	for {
		page, err := p.opts.Store.List(ctx, Namespace, kv.ListOptions{Prefix: prefix, After: after, Limit: kv.MaxListLimit})
		if err != nil {
			return nil, nil, storeErr(err)
		}
		for _, e := range page {
			var v Version
			if err := json.Unmarshal(e.Value, &v); err == nil {
				out = append(out, &v)
			}
		}
		if len(page) < kv.MaxListLimit {
			break
		}
		after = page[len(page)-1].Key
	}
	return &h, out, nil
}

// updateHead changes owner's head of name with fn, reading the version
// ver (0: none) in the same transaction.
func (p *Programs) updateHead(ctx context.Context, owner, name string, ver int, fn func(h *Head, v *Version) error) error {
	hk := headKey(owner, name)
	keys := []string{hk, genKey}
	vk := ""
	if ver > 0 {
		vk = versionKey(owner, name, ver)
		keys = append(keys, vk)
	}
	err := p.opts.Store.Update(ctx, Namespace, keys, func(cur map[string][]byte) ([]kv.Change, error) {
		raw, ok := cur[hk]
		if !ok {
			return nil, notFound(name)
		}
		var h Head
		if err := json.Unmarshal(raw, &h); err != nil {
			return nil, err
		}
		var v *Version
		if vk != "" {
			raw, ok := cur[vk]
			if !ok {
				return nil, notFound(name + "@" + strconv.Itoa(ver))
			}
			v = &Version{}
			if err := json.Unmarshal(raw, v); err != nil {
				return nil, err
			}
		}
		if err := fn(&h, v); err != nil {
			return nil, err
		}
		return withGen(cur, kv.Change{Key: hk, Value: mustJSON(&h)}), nil
	})
	if err != nil {
		return storeErr(err)
	}
	p.changed()
	return nil
}

// SetCurrent makes version ver of the caller's own program name current.
func (p *Programs) SetCurrent(ctx context.Context, c Caller, name string, ver int) error {
	if err := CheckName(name); err != nil {
		return err
	}
	return p.updateHead(ctx, c.Owner(), name, ver, func(h *Head, v *Version) error {
		h.Current, h.Cur = v.Version, summaryOf(v)
		return nil
	})
}

// Publish makes version ver of owner's program name callable by to
// (principal names, group:<g>, scope:<s>, "*" for everyone); an empty to
// withdraws the publication. Only an admin may.
func (p *Programs) Publish(ctx context.Context, c Caller, owner, name string, ver int, to []string) error {
	if !c.Admin {
		return v8sandbox.Errorf(CodeForbidden, "only an admin (server.auth.admins) publishes programs")
	}
	if err := CheckName(name); err != nil {
		return err
	}
	if owner == "" {
		owner = c.Owner()
	}
	if len(to) == 0 {
		return p.updateHead(ctx, owner, name, 0, func(h *Head, _ *Version) error {
			h.Published = nil
			return nil
		})
	}
	for _, t := range to {
		if strings.TrimSpace(t) == "" {
			return v8sandbox.Errorf(CodeInvalid, "an empty name in the publication's audience")
		}
	}
	return p.updateHead(ctx, owner, name, ver, func(h *Head, v *Version) error {
		h.Published = &Publication{Version: v.Version, To: slices.Clone(to), By: c.Owner(), At: time.Now().UTC(), Cur: summaryOf(v)}
		return nil
	})
}
