package surface

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/skills"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bounds of prompt and resource aggregation.
const (
	// maxAggregated bounds the prompts, resources and resource templates
	// taken from one backend (each).
	maxAggregated = 1000
	// aggregateTimeout bounds listing one backend's prompts and resources.
	aggregateTimeout = 30 * time.Second
)

// backendLists are one backend's prompts, resources and templates.
type backendLists struct {
	prompts   []*mcp.Prompt
	resources []*mcp.Resource
	templates []*mcp.ResourceTemplate
	subscribe bool // the backend supports resources/subscribe
	skills    bool // the backend declares the Skills extension (skills.go)
}

// aggregate lists every backend's prompts (named like passthrough tools,
// as server.tool_names says), resources and resource templates (under their
// own URIs) on the gateway's servers and forwards prompts/get,
// resources/read and resources/subscribe to the owning backend. A URI (or
// template) two backends claim goes to the one with the highest priority,
// then the first in configuration order; the conflict is logged once.
type aggregate struct {
	backends *backend.Manager
	policy   *pipeline.Policy // backends.<name>.prompts and .resources
	logger   *slog.Logger
	mu       sync.Mutex
	servers  []*mcp.Server
	lists    map[string]*backendLists
	listed   map[string]string // "p:name", "r:uri", "t:template" → fingerprint
	owners   map[string]string // resource URI → backend
	logged   map[string]bool   // conflicts already logged
	subs     subscriptions     // resource URI → subscribed client sessions (subscriptions.go)
	routes   map[string]route  // listed key → backend (and prompt name): completion (complete.go)

	naming     naming          // prompt names; the order URIs are claimed in
	collisions *nameCollisions // prompt names backends share

	// skillRead reads a skill file isogate serves: a declaring backend's
	// skill:// resources are listed under skill://<backend>/ (skills.go).
	skillRead mcp.ResourceHandler
}

func (a *aggregate) attach(s *mcp.Server) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.servers = append(a.servers, s)
}

// refresh lists a backend's prompts and resources again, in the background
// (the caller may be holding up the backend's connection).
func (a *aggregate) refresh(name string) {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), aggregateTimeout)
		defer cancel()
		l, err := a.fetch(ctx, name)
		if err != nil {
			a.logger.Debug("listing backend prompts and resources failed", slog.String("backend", name), slog.Any("error", err))
			return
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.lists == nil {
			a.lists = map[string]*backendLists{}
		}
		a.lists[name] = l
		a.publishLocked()
	}()
}

// republish names the prompts and settles the URIs again.
func (a *aggregate) republish() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.publishLocked()
}

// forget drops a removed backend's prompts and resources.
func (a *aggregate) forget(name string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.lists, name)
	a.publishLocked()
}

// fetch lists what the backend offers, according to its capabilities.
func (a *aggregate) fetch(ctx context.Context, name string) (*backendLists, error) {
	sess, err := a.backends.Session(backend.Shared(ctx), name)
	if err != nil {
		return nil, err
	}
	l := &backendLists{}
	if ir := sess.InitializeResult(); ir != nil && ir.Capabilities != nil && ir.Capabilities.Resources != nil {
		l.subscribe = ir.Capabilities.Resources.Subscribe
	}
	l.skills = skills.Declared(sess.InitializeResult())
	// Capabilities are announced at connection time, but a backend may add
	// prompts or resources later: ask anyway, and take an error (method not
	// found) as "none".
	for p, err := range sess.Prompts(ctx, nil) {
		if err != nil || len(l.prompts) >= maxAggregated {
			break
		}
		if p != nil && p.Name != "" {
			l.prompts = append(l.prompts, p)
		}
	}
	for r, err := range sess.Resources(ctx, nil) {
		if err != nil || len(l.resources) >= maxAggregated {
			break
		}
		if r != nil && r.URI != "" {
			l.resources = append(l.resources, r)
		}
	}
	for t, err := range sess.ResourceTemplates(ctx, nil) {
		if err != nil || len(l.templates) >= maxAggregated {
			break
		}
		if t != nil && t.URITemplate != "" {
			l.templates = append(l.templates, t)
		}
	}
	return l, nil
}

// publishLocked brings every server's prompts, resources and templates in
// line with the backends' lists.
func (a *aggregate) publishLocked() {
	if a.listed == nil {
		a.listed = map[string]string{}
	}
	want := map[string]bool{}
	owners := map[string]string{}
	var pairs []namePair
	prompts := map[namePair]*mcp.Prompt{}
	claimed := map[string]string{} // "r:uri" / "t:template" → backend
	// The first segments of skill:// URIs isogate serves itself: its own
	// skills' and each declaring backend's prefix.
	skillAuthorities := map[string]bool{skills.OwnAuthority: true}
	for name, l := range a.lists {
		if l.skills {
			skillAuthorities[name] = true
		}
	}
	// Highest priority first, then configuration order.
	for _, name := range a.naming.rank(a.backends.Backends()) {
		l := a.lists[name]
		if l == nil {
			continue
		}
		for _, p := range l.prompts {
			if a.policy.DecidePrompt(name, p.Name) == pipeline.Denied {
				continue
			}
			np := namePair{name, p.Name}
			pairs = append(pairs, np)
			prompts[np] = p
		}
		for _, r := range l.resources {
			if a.policy.DecideResource(name, r.URI) == pipeline.Denied {
				continue
			}
			if skills.IsSkillURI(r.URI) {
				if l.skills {
					// A declaring backend's skill file, under its prefix.
					uri, _ := skills.Prefixed(name, r.URI)
					shown := *r
					shown.URI = uri
					key := "r:" + uri
					if a.claim(claimed, key, name) {
						want[key] = true
						a.register(key, name, &shown, func(s *mcp.Server) { s.AddResource(&shown, a.skillRead) })
					}
					continue
				}
				if auth, _ := skills.Authority(r.URI); skillAuthorities[strings.ToLower(auth)] || skillAuthorities[auth] {
					a.logOnce("r:"+r.URI, fmt.Sprintf("backend %q offers %s, under a prefix isogate serves skills at; ignored", name, r.URI))
					continue
				}
			}
			if a.claim(claimed, "r:"+r.URI, name) && validURI(r.URI) {
				owners[r.URI] = name
				key := "r:" + r.URI
				want[key] = true
				a.register(key, name, r, func(s *mcp.Server) { s.AddResource(r, a.readHandler(name, "")) })
			}
		}
		for _, t := range l.templates {
			if a.policy.DecideTemplate(name, t.URITemplate) == pipeline.Denied {
				continue
			}
			if a.claim(claimed, "t:"+t.URITemplate, name) {
				key := "t:" + t.URITemplate
				want[key] = true
				a.register(key, name, t, func(s *mcp.Server) { s.AddResourceTemplate(t, a.readHandler(name, t.URITemplate)) })
			}
		}
	}
	names, collisions := a.naming.assign(KindPrompt, pairs)
	a.collisions.set(KindPrompt, collisions)
	plain := map[string]string{}
	for np, n := range names {
		if n == np.name {
			plain[n] = np.backend
		}
	}
	a.collisions.served(KindPrompt, plain)
	for np, n := range names {
		p := prompts[np]
		key := "p:" + n
		want[key] = true
		shown := &mcp.Prompt{Name: n, Title: p.Title, Description: p.Description, Arguments: p.Arguments, Icons: p.Icons}
		a.register(key, np.backend, p, func(s *mcp.Server) { s.AddPrompt(shown, a.promptHandler(np.backend, p.Name)) })
	}
	a.owners = owners
	var stalePrompts, staleResources, staleTemplates []string
	for key := range a.listed {
		if want[key] {
			continue
		}
		delete(a.listed, key)
		switch key[:2] {
		case "p:":
			stalePrompts = append(stalePrompts, key[2:])
		case "r:":
			staleResources = append(staleResources, key[2:])
		case "t:":
			staleTemplates = append(staleTemplates, key[2:])
		}
	}
	for _, s := range a.servers {
		if len(stalePrompts) > 0 {
			s.RemovePrompts(stalePrompts...)
		}
		if len(staleResources) > 0 {
			s.RemoveResources(staleResources...)
		}
		if len(staleTemplates) > 0 {
			s.RemoveResourceTemplates(staleTemplates...)
		}
	}
}

// isogateURI reports whether uri is of isogate's own scheme, in any case.
func isogateURI(uri string) bool {
	return len(uri) >= len(isogateScheme) && strings.EqualFold(uri[:len(isogateScheme)], isogateScheme)
}

// isogateScheme starts the URIs of isogate's own resources.
const isogateScheme = "isogate:"

// claim gives key to backend unless an earlier backend (or isogate itself)
// holds it, logging a conflict once.
func (a *aggregate) claim(claimed map[string]string, key, backend string) bool {
	if isogateURI(key[2:]) {
		a.logOnce(key, fmt.Sprintf("backend %q offers %s, which is isogate's own; ignored", backend, key[2:]))
		return false
	}
	if first, ok := claimed[key]; ok {
		if first != backend {
			a.logOnce(key, fmt.Sprintf("backends %q and %q both offer %s; %q serves it", first, backend, key[2:], first))
		}
		return false
	}
	claimed[key] = backend
	return true
}

func (a *aggregate) logOnce(key, msg string) {
	if a.logged == nil {
		a.logged = map[string]bool{}
	}
	if !a.logged[key] {
		a.logged[key] = true
		a.logger.Warn(msg)
	}
}

// register adds (or replaces) one item on every server when its definition
// or its owning backend changed since it was last listed.
func (a *aggregate) register(key, owner string, def any, add func(*mcp.Server)) {
	// The owner is part of the fingerprint: when an earlier backend in
	// configuration order comes up and takes over a URI, the handler changes.
	fp, _ := json.Marshal(struct {
		Owner string
		Def   any
	}{owner, def})
	if a.listed[key] == string(fp) {
		return
	}
	a.listed[key] = string(fp)
	a.noteRoute(key, owner, def)
	for _, s := range a.servers {
		func() {
			defer func() {
				if r := recover(); r != nil { // the SDK panics on an invalid URI or template
					a.logger.Warn("backend resource not listed", slog.String("key", key), slog.Any("error", r))
				}
			}()
			add(s)
		}()
	}
}

// validURI reports whether the SDK will accept uri as a resource URI.
func validURI(uri string) bool {
	return strings.Contains(uri, ":") && !strings.ContainsAny(uri, " \t\n")
}

func (a *aggregate) promptHandler(backend, name string) mcp.PromptHandler {
	return func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		if a.policy.DecidePrompt(backend, name) == pipeline.Denied { // a reload denied it since it was listed
			return nil, fmt.Errorf("prompt %q not found", req.Params.Name)
		}
		sess, err := a.backends.Session(ctx, backend)
		if err != nil {
			return nil, err
		}
		// A retry of an InputRequiredResult (SEP-2322) goes on untouched.
		return sess.GetPrompt(ctx, &mcp.GetPromptParams{Name: name, Arguments: req.Params.Arguments, Meta: req.Params.Meta,
			InputResponses: req.Params.InputResponses, RequestState: req.Params.RequestState})
	}
}

// readHandler forwards resources/read of a backend's resource, or of a URI
// its template (when not "") matches, unless the policy refuses the URI
// now: the URIs of isogate's own scheme (in any case) are never sent to a
// backend.
func (a *aggregate) readHandler(backend, template string) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		uri := req.Params.URI
		refused := isogateURI(uri) || a.policy.ResourceDenied(backend, uri)
		if template == "" {
			refused = refused || a.policy.DecideResource(backend, uri) == pipeline.Denied
		} else {
			refused = refused || a.policy.DecideTemplate(backend, template) == pipeline.Denied
		}
		if refused {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		sess, err := a.backends.Session(ctx, backend)
		if err != nil {
			return nil, err
		}
		return sess.ReadResource(ctx, &mcp.ReadResourceParams{URI: req.Params.URI, Meta: req.Params.Meta,
			InputResponses: req.Params.InputResponses, RequestState: req.Params.RequestState})
	}
}

// updated relays a backend's notifications/resources/updated to the
// subscribed clients of every server.
func (a *aggregate) updated(backend string, params *mcp.ResourceUpdatedNotificationParams) {
	a.mu.Lock()
	owner := a.owners[params.URI]
	servers := append([]*mcp.Server(nil), a.servers...)
	a.mu.Unlock()
	if owner != backend {
		return
	}
	for _, s := range servers {
		_ = s.ResourceUpdated(context.Background(), params)
	}
}

// isogateSchemeMiddleware spells the scheme of isogate's own resource URIs
// in lower case before resources are matched (URI schemes are
// case-insensitive, RFC 3986): ISOGATE://stats is isogate://stats, never
// a URI for a backend's template.
func isogateSchemeMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		var uri *string
		switch p := req.GetParams().(type) {
		case *mcp.ReadResourceParams:
			uri = &p.URI
		case *mcp.SubscribeParams:
			uri = &p.URI
		case *mcp.UnsubscribeParams:
			uri = &p.URI
		}
		if uri != nil && isogateURI(*uri) && !strings.HasPrefix(*uri, isogateScheme) {
			*uri = isogateScheme + (*uri)[len(isogateScheme):]
		}
		return next(ctx, method, req)
	}
}

// shared is ctx for a request on a backend's shared session (see
// backend.Shared); a function here because handlers name their backend
// "backend".
func shared(ctx context.Context) context.Context { return backend.Shared(ctx) }
