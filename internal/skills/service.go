package skills

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/authn"
)

// CodeUnavailable is the code (in a -32603 error's data) of a skills/list,
// skills/get or skill read refused because a [Source] could not answer
// (its store unreachable): retryable.
const CodeUnavailable = "SKILLS_UNAVAILABLE"

// DefaultBackendTimeout bounds one backend's skills/list or skills/get
// when [Options.BackendTimeout] is zero.
const DefaultBackendTimeout = 10 * time.Second

// Options configure a [Service]; the zero value of each field means its
// default.
type Options struct {
	// Sources serve isogate's own skills; none: only backends' skills.
	Sources []Source
	// Upstream gives the backends whose skills are aggregated; nil: none.
	Upstream Upstream
	// Logger receives the service's logs; default slog.Default().
	Logger *slog.Logger
	// BackendTimeout bounds one backend's answer; default
	// DefaultBackendTimeout.
	BackendTimeout time.Duration
}

// Service serves skills on MCP servers: skills/list, skills/get, and the
// skill files through resources/list and resources/read (see [Service.Install]).
type Service struct {
	opts Options
	log  *slog.Logger
}

// New returns a service over opts.
func New(opts Options) *Service {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.BackendTimeout <= 0 {
		opts.BackendTimeout = DefaultBackendTimeout
	}
	return &Service{opts: opts, log: opts.Logger}
}

// Install declares the extension's methods on srv. The server's
// capabilities must declare the extension and resources themselves
// (mcp.ServerOptions.Capabilities: see [Capability]), and [Service.Middleware]
// must be among its receiving middleware for skill files to be listed and
// read.
func (s *Service) Install(srv *mcp.Server) error {
	err := errors.Join(
		mcp.AddReceivingCustomMethod(srv, MethodList, func(ctx context.Context, _ *mcp.ServerSession, p *ListParams) (*ListResult, error) {
			return s.List(ctx, p)
		}),
		mcp.AddReceivingCustomMethod(srv, MethodGet, func(ctx context.Context, _ *mcp.ServerSession, p *GetParams) (*GetResult, error) {
			return s.Get(ctx, p)
		}))
	if err != nil {
		return fmt.Errorf("installing the skills methods: %w", err)
	}
	return nil
}

// Capability is the extension's entry under capabilities.extensions: no
// optional feature (resources/directory/read is not offered).
func Capability() map[string]any { return map[string]any{} }

// List answers skills/list: isogate's own skills the caller may see, then
// each backend's (in the Upstream's order), in one page.
func (s *Service) List(ctx context.Context, p *ListParams) (*ListResult, error) {
	if p != nil && p.Cursor != "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "skills/list: unknown cursor (isogate answers every skill in one page)"}
	}
	own, err := s.own(ctx)
	if err != nil {
		return nil, err
	}
	res := &ListResult{ResultType: complete, Skills: []Entry{}, Cacheable: private}
	for _, c := range own {
		res.Skills = append(res.Skills, c.entry)
	}
	res.Skills = append(res.Skills, s.backendEntries(ctx)...)
	return res, nil
}

// Get answers skills/get: the entry of the skill whose SKILL.md is at
// p.URI, or -32602 when the caller is served no skill there.
func (s *Service) Get(ctx context.Context, p *GetParams) (*GetResult, error) {
	var uri string
	if p != nil {
		uri = p.URI
	}
	notFound := &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "No skill is served at " + uri}
	authority, rest, ok := split(uri)
	if !ok || !strings.HasSuffix(rest, "/"+SkillFile) {
		return nil, notFound
	}
	if strings.EqualFold(authority, OwnAuthority) {
		own, err := s.own(ctx)
		if err != nil {
			return nil, err
		}
		for _, c := range own {
			if c.entry.URI == normalize(uri) {
				return &GetResult{ResultType: complete, Skill: c.entry, Cacheable: private}, nil
			}
		}
		return nil, notFound
	}
	e, err := s.backendGet(ctx, authority, rest)
	if err != nil || e == nil {
		if err != nil {
			s.log.Debug("skills/get from a backend failed", slog.String("uri", uri), slog.Any("error", err))
		}
		return nil, notFound
	}
	return &GetResult{ResultType: complete, Skill: *e, Cacheable: private}, nil
}

// Read answers resources/read of a skill file isogate serves: handled is
// false for a URI that is not one (another resource, or a backend's
// skill:// resource that the gateway serves as an ordinary one).
func (s *Service) Read(ctx context.Context, uri string) (res *mcp.ReadResourceResult, handled bool, err error) {
	authority, rest, ok := split(uri)
	if !ok {
		return nil, false, nil
	}
	if strings.EqualFold(authority, OwnAuthority) {
		own, err := s.own(ctx)
		if err != nil {
			return nil, true, err
		}
		want := normalize(uri)
		for _, c := range own {
			if f, ok := c.files[want]; ok {
				return fileResult(uri, f), true, nil
			}
		}
		return nil, true, mcp.ResourceNotFoundError(uri)
	}
	if !s.declares(ctx, authority) {
		return nil, false, nil
	}
	res, err = s.backendRead(ctx, authority, rest, uri)
	return res, true, err
}

// Resources are the files of isogate's own skills the caller may see, as
// resources/list shows them.
func (s *Service) Resources(ctx context.Context) ([]*mcp.Resource, error) {
	own, err := s.own(ctx)
	if err != nil {
		return nil, err
	}
	var out []*mcp.Resource
	for _, c := range own {
		for _, uri := range c.order {
			f := c.files[uri]
			r := &mcp.Resource{URI: uri, Name: f.Path, MIMEType: f.mimeType(), Size: int64(len(f.Content))}
			if f.Path == SkillFile {
				r.Name, r.Description = c.name, c.desc
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// Middleware adds the caller's own skill files to the last page of
// resources/list (none when a source fails: the list is not refused for
// it) and answers resources/read of every skill file isogate
// serves (its own, and its backends' under their prefix); other requests
// go on untouched. It must run inside the middleware that puts the
// principal in the context.
func (s *Service) Middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch p := req.GetParams().(type) {
		case *mcp.ReadResourceParams:
			if res, handled, err := s.Read(ctx, p.URI); handled {
				if err != nil {
					return nil, err
				}
				return res, nil
			}
		case *mcp.ListResourcesParams:
			res, err := next(ctx, method, req)
			lr, ok := res.(*mcp.ListResourcesResult)
			if err != nil || !ok || lr == nil || lr.NextCursor != "" {
				return res, err
			}
			own, err := s.Resources(ctx)
			if err != nil {
				// The other resources are still listed; the skills
				// methods and reads refuse (SKILLS_UNAVAILABLE).
				s.log.Warn("resources/list without isogate's own skill files", slog.Any("error", err))
				return lr, nil
			}
			if len(own) > 0 {
				lr.Resources = append(slices.Clip(lr.Resources), own...)
				lr.CacheScope = private.CacheScope
			}
			return lr, nil
		}
		return next(ctx, method, req)
	}
}

// own checks every source's skills for the caller: a source's failure
// refuses the request (retryable), a malformed skill is left out (and
// logged).
func (s *Service) own(ctx context.Context) ([]*checked, error) {
	p := authn.FromContext(ctx)
	var out []*checked
	seen := map[string]bool{}
	for _, src := range s.opts.Sources {
		list, err := src.Skills(ctx, p)
		if err != nil {
			data, _ := json.Marshal(map[string]any{"code": CodeUnavailable, "retryable": true})
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
				Message: CodeUnavailable + ": a skill source could not answer; try again: " + err.Error(), Data: data}
		}
		for _, sk := range list {
			c, err := check(sk)
			if err != nil {
				s.log.Warn("skill not served", slog.Any("error", err))
				continue
			}
			if seen[c.entry.URI] {
				s.log.Warn("skill not served: another source serves the same path", slog.String("uri", c.entry.URI))
				continue
			}
			seen[c.entry.URI] = true
			out = append(out, c)
		}
	}
	return out, nil
}

// fileResult is a read of f at uri: text when it is UTF-8 text, else blob.
func fileResult(uri string, f File) *mcp.ReadResourceResult {
	c := &mcp.ResourceContents{URI: uri, MIMEType: f.mimeType()}
	if isText(c.MIMEType, f.Content) {
		c.Text = string(f.Content)
	} else {
		c.Blob = f.Content
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c}, Cacheable: private}
}

// normalize spells a skill URI's scheme and isogate's authority in lower
// case (both are case-insensitive), leaving the path as it is.
func normalize(uri string) string {
	authority, rest, ok := split(uri)
	if !ok {
		return uri
	}
	if strings.EqualFold(authority, OwnAuthority) {
		authority = OwnAuthority
	}
	return Scheme + escape(authority) + rest
}
