package skills

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Upstream gives a [Service] the backends whose skills it aggregates.
type Upstream interface {
	// Backends names the backends, in the order their skills are listed.
	Backends() []string
	// Session returns the backend's client session for the caller ctx
	// carries (its own session where the backend gives it one).
	Session(ctx context.Context, backend string) (*mcp.ClientSession, error)
	// Allowed reports whether the policy lets the backend's resource uri
	// (its own URI, without isogate's prefix) be listed and read.
	Allowed(backend, uri string) bool
}

// maxBackendSkills bounds the skills taken from one backend's listing.
const maxBackendSkills = 1000

// Prefixed is the URI under which isogate serves a backend's skill file
// uri: skill://<backend>/<uri's skill path and file>; ok is false for a URI
// of another scheme (not aggregated).
func Prefixed(backend, uri string) (string, bool) {
	if !IsSkillURI(uri) {
		return "", false
	}
	return Scheme + escape(backend) + "/" + uri[len(Scheme):], true
}

// IsSkillURI reports whether uri is of the skill:// scheme (in any case).
func IsSkillURI(uri string) bool {
	return len(uri) > len(Scheme) && strings.EqualFold(uri[:len(Scheme)], Scheme)
}

// Authority is the first segment of a skill:// URI, decoded: for the URIs
// isogate serves, "isogate" or the backend's name.
func Authority(uri string) (string, bool) {
	a, _, ok := split(uri)
	return a, ok
}

// split cuts a skill:// URI into its first segment (decoded) and the rest
// ("/refunds/SKILL.md").
func split(uri string) (authority, rest string, ok bool) {
	if !IsSkillURI(uri) {
		return "", "", false
	}
	raw, rest, found := strings.Cut(uri[len(Scheme):], "/")
	if !found || raw == "" || rest == "" {
		return "", "", false
	}
	a, err := url.PathUnescape(raw)
	if err != nil {
		return "", "", false
	}
	return a, "/" + rest, true
}

// escape writes a backend's name as a URI authority (an RFC 3986
// reg-name): unreserved characters as they are, every other byte
// percent-encoded.
func escape(name string) string {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// isText reports whether content of this media type goes as text.
func isText(mimeType string, content []byte) bool {
	t := strings.ToLower(mimeType)
	return (strings.HasPrefix(t, "text/") || strings.HasSuffix(t, "json") || strings.HasSuffix(t, "+xml") || t == "application/yaml") &&
		utf8.Valid(content)
}

// session is the backend's session when the backend declares the
// extension (on the session ctx's caller gets).
func (s *Service) session(ctx context.Context, backend string) *mcp.ClientSession {
	up := s.opts.Upstream
	if up == nil || strings.EqualFold(backend, OwnAuthority) {
		return nil
	}
	known := false
	for _, b := range up.Backends() {
		known = known || b == backend
	}
	if !known {
		return nil
	}
	sess, err := up.Session(ctx, backend)
	if err != nil || !Declared(sess.InitializeResult()) {
		return nil
	}
	return sess
}

// declares reports whether backend is one whose skills isogate serves.
func (s *Service) declares(ctx context.Context, backend string) bool {
	return s.session(ctx, backend) != nil
}

// backendEntries lists every declaring backend's skills, concurrently,
// each under its prefix; a backend that fails is left out (a listing may
// be partial: a host must still load a skill by its URI).
func (s *Service) backendEntries(ctx context.Context) []Entry {
	up := s.opts.Upstream
	if up == nil {
		return nil
	}
	names := up.Backends()
	lists := make([][]Entry, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() {
			entries, err := s.listBackend(ctx, name)
			if err != nil {
				s.log.Debug("skills/list from a backend failed", slog.String("backend", name), slog.Any("error", err))
			}
			lists[i] = entries
		})
	}
	wg.Wait()
	var out []Entry
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// listBackend pages through one backend's skills/list.
func (s *Service) listBackend(ctx context.Context, backend string) ([]Entry, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.BackendTimeout)
	defer cancel()
	sess := s.session(ctx, backend)
	if sess == nil {
		return nil, nil
	}
	var out []Entry
	params := &ListParams{}
	for count := 0; count < maxBackendSkills; {
		res, err := mcp.CallCustomMethod[*ListParams, *ListResult](ctx, sess, MethodList, params)
		if err != nil {
			return out, fmt.Errorf("backend %q: %s: %w", backend, MethodList, err)
		}
		for _, e := range res.Skills {
			if count++; count > maxBackendSkills {
				break
			}
			if pe, ok := s.prefix(backend, e); ok {
				out = append(out, pe)
			}
		}
		if res.NextCursor == "" || res.NextCursor == params.Cursor {
			break
		}
		params = &ListParams{Cursor: res.NextCursor}
	}
	return out, nil
}

// backendGet asks the backend for the skill at its own URI skill:/<rest>
// (rest from a prefixed URI).
func (s *Service) backendGet(ctx context.Context, backend, rest string) (*Entry, error) {
	sess := s.session(ctx, backend)
	if sess == nil {
		return nil, nil
	}
	own := Scheme + rest[1:]
	if !s.opts.Upstream.Allowed(backend, own) {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.BackendTimeout)
	defer cancel()
	res, err := mcp.CallCustomMethod[*GetParams, *GetResult](ctx, sess, MethodGet, &GetParams{URI: own})
	if err != nil {
		return nil, fmt.Errorf("backend %q: %s: %w", backend, MethodGet, err)
	}
	if res.Skill.URI != own {
		return nil, fmt.Errorf("backend %q answered %s %s with the skill %s", backend, MethodGet, own, res.Skill.URI)
	}
	e, ok := s.prefix(backend, res.Skill)
	if !ok {
		return nil, nil
	}
	return &e, nil
}

// backendRead forwards a read of a backend's skill file (its own URI
// skill:/<rest>) unless the policy refuses it, and gives the contents the
// prefixed URI the caller asked for; the bytes are the backend's, so their
// digest is the one its entry carries.
func (s *Service) backendRead(ctx context.Context, backend, rest, asked string) (*mcp.ReadResourceResult, error) {
	own := Scheme + rest[1:]
	if !s.opts.Upstream.Allowed(backend, own) {
		return nil, mcp.ResourceNotFoundError(asked)
	}
	sess := s.session(ctx, backend)
	if sess == nil {
		return nil, mcp.ResourceNotFoundError(asked)
	}
	res, err := sess.ReadResource(ctx, &mcp.ReadResourceParams{URI: own})
	if err != nil {
		return nil, err
	}
	out := *res
	out.Contents = make([]*mcp.ResourceContents, len(res.Contents))
	for i, c := range res.Contents {
		cc := *c
		if p, ok := Prefixed(backend, cc.URI); ok {
			cc.URI = p
		}
		out.Contents[i] = &cc
	}
	out.CacheScope = private.CacheScope
	return &out, nil
}

// prefix rewrites a backend's entry under the backend's prefix; ok is
// false for a skill isogate does not serve: one not under skill://, or one
// with a file the policy refuses (its entry would not be complete).
func (s *Service) prefix(backend string, e Entry) (Entry, bool) {
	up := s.opts.Upstream
	uri, ok := Prefixed(backend, e.URI)
	if !ok || !up.Allowed(backend, e.URI) {
		return Entry{}, false
	}
	out := Entry{URI: uri, Frontmatter: e.Frontmatter, Resources: Resources{Dynamic: e.Resources.Dynamic}}
	for _, r := range e.Resources.Files {
		p, ok := Prefixed(backend, r.URI)
		if !ok || !up.Allowed(backend, r.URI) {
			return Entry{}, false
		}
		r.URI = p
		out.Resources.Files = append(out.Resources.Files, r)
	}
	return out, true
}
